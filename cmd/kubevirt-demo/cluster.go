package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"
)

// prepareInfra creates what an infra admin provides: a default
// StorageClass, initialized for tenant clusters (cdi-controller makes its
// StorageProfile). The tenant namespace comes from the TenantCluster.
func prepareInfra(ctx context.Context, infra *envtest.Env) error {
	return createAll(ctx, infra.Client,
		&storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{Name: "standard", Annotations: map[string]string{
				"storageclass.kubernetes.io/is-default-class": "true",
				storageclass.InitializeAnnotation:             "true",
			}},
			Provisioner: simulator.DefaultProvisioner,
		},
	)
}

func createAll(ctx context.Context, c ctrlruntimeclient.Client, objs ...ctrlruntimeclient.Object) error {
	for _, obj := range objs {
		if err := c.Create(ctx, obj); ctrlruntimeclient.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("failed to create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// runSimulator plays what KubeVirt's and CDI's controllers leave to the
// nodes until ctx ends: the infra nodes' kubelets, scheduler and volume
// provisioner, virt-handlers and the guests, which join the user cluster as
// Nodes.
func runSimulator(ctx context.Context, cl *clusters) error {
	mgr, err := ctrl.NewManager(cl.infra.Config, ctrl.Options{
		Scheme:  cl.infra.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return fmt.Errorf("failed to create the simulator manager: %w", err)
	}
	opts := simulator.Options{
		VirtHandler: cl.infra.VirtHandlerConfig,
		ImportDelay: 2 * time.Second, StartDelay: time.Second, UserClient: cl.user.Client,
	}
	if err := simulator.Add(ctx, mgr, opts); err != nil {
		return fmt.Errorf("failed to add the simulator: %w", err)
	}
	return mgr.Start(ctx)
}

// applyExample creates the MachineDeployment of the file in the user cluster.
func applyExample(ctx context.Context, user *envtest.Env, path string) (*clusterv1alpha1.MachineDeployment, error) {
	md, err := readExample(path)
	if err != nil {
		return nil, err
	}
	if err := createAll(ctx, user.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: md.Namespace}}, md); err != nil {
		return nil, err
	}
	return md, nil
}

// readExample decodes the MachineDeployment of the file; its namespace is
// kube-system when it names none.
func readExample(path string) (*clusterv1alpha1.MachineDeployment, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the example: %w", err)
	}
	md := &clusterv1alpha1.MachineDeployment{}
	if err := yaml.UnmarshalStrict(raw, md); err != nil {
		return nil, fmt.Errorf("failed to decode %s: %w", path, err)
	}
	if md.Namespace == "" {
		md.Namespace = metav1.NamespaceSystem
	}
	return md, nil
}

// brokenMemory is what refuseBroken writes into the example's memory.
const brokenMemory = "lots"

// refuseBroken applies the example with an invalid memory quantity and
// returns the webhook's refusal; storing it is an error.
func refuseBroken(ctx context.Context, user *envtest.Env, path string) (string, error) {
	md, err := readExample(path)
	if err != nil {
		return "", err
	}
	if md.Spec.Template.Spec.ProviderSpec.Value == nil {
		return "", fmt.Errorf("%s has no providerSpec.value", path)
	}
	var spec map[string]any
	if err := json.Unmarshal(md.Spec.Template.Spec.ProviderSpec.Value.Raw, &spec); err != nil {
		return "", fmt.Errorf("failed to decode the providerSpec of %s: %w", path, err)
	}
	template := spec
	for _, key := range []string{"cloudProviderSpec", "virtualMachine", "template"} {
		next, _ := template[key].(map[string]any)
		if next == nil {
			next = map[string]any{}
			template[key] = next
		}
		template = next
	}
	template["memory"] = brokenMemory
	raw, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("failed to encode the broken providerSpec: %w", err)
	}
	md.Name += "-broken"
	md.Spec.Template.Spec.ProviderSpec.Value.Raw = raw
	err = user.Client.Create(ctx, md, ctrlruntimeclient.DryRunAll)
	if err == nil {
		return "", fmt.Errorf("the user cluster stored MachineDeployment %s with memory %q: the webhook did not refuse it", md.Name, brokenMemory)
	}
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
		return "", fmt.Errorf("failed to apply the broken MachineDeployment: %w", err)
	}
	return err.Error(), nil
}

func replicasOf(md *clusterv1alpha1.MachineDeployment) int32 {
	return ptr.Deref(md.Spec.Replicas, 1)
}
