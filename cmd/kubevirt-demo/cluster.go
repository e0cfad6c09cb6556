package main

import (
	"context"
	"fmt"
	"os"
	"time"

	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"
)

// prepareInfra creates what an infra admin provides: the tenant namespace
// and a default StorageClass with its CDI StorageProfile.
func prepareInfra(ctx context.Context, env *envtest.Env) error {
	objs := []ctrlruntimeclient.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: infraNamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}},
		&storagev1.StorageClass{
			ObjectMeta:  metav1.ObjectMeta{Name: "standard", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
			Provisioner: "rancher.io/local-path",
		},
		&cdicorev1beta1.StorageProfile{ObjectMeta: metav1.ObjectMeta{Name: "standard"}},
	}
	for _, obj := range objs {
		if err := env.Client.Create(ctx, obj); ctrlruntimeclient.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("failed to create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// startSimulator runs the KubeVirt/CDI simulator until the returned function
// is called.
func startSimulator(ctx context.Context, env *envtest.Env) (func(), error) {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return nil, fmt.Errorf("failed to create the simulator manager: %w", err)
	}
	if err := simulator.Add(mgr, simulator.Options{ImportDelay: 2 * time.Second, StartDelay: time.Second}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mgr.Start(ctx)
	}()
	return func() { cancel(); <-done }, nil
}

// createMachines creates the MachineDeployment of the file, one MachineSet
// and its Machines in the user cluster, owned the way machine-controller
// owns them, so the provider finds the MachineDeployment name.
func createMachines(ctx context.Context, env *envtest.Env, path string) (machineList, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the example: %w", err)
	}
	md := &clusterv1alpha1.MachineDeployment{}
	if err := yaml.UnmarshalStrict(raw, md); err != nil {
		return nil, fmt.Errorf("failed to decode %s: %w", path, err)
	}
	c := env.Client
	if err := c.Create(ctx, md); err != nil {
		return nil, fmt.Errorf("failed to create MachineDeployment %s: %w", md.Name, err)
	}
	ms := &clusterv1alpha1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: md.Name + "-5d8f7", Namespace: md.Namespace,
			OwnerReferences: []metav1.OwnerReference{owner("MachineDeployment", md.Name, md.UID)},
		},
		Spec: clusterv1alpha1.MachineSetSpec{Replicas: md.Spec.Replicas, Selector: md.Spec.Selector, Template: md.Spec.Template},
	}
	if err := c.Create(ctx, ms); err != nil {
		return nil, fmt.Errorf("failed to create MachineSet %s: %w", ms.Name, err)
	}
	var machines machineList
	for i := range ptr.Deref(md.Spec.Replicas, 1) {
		m := &clusterv1alpha1.Machine{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("%s-%d", ms.Name, i), Namespace: md.Namespace,
				Labels:          md.Spec.Template.Labels,
				OwnerReferences: []metav1.OwnerReference{owner("MachineSet", ms.Name, ms.UID)},
			},
			Spec: md.Spec.Template.Spec,
		}
		if err := c.Create(ctx, m); err != nil {
			return nil, fmt.Errorf("failed to create Machine %s: %w", m.Name, err)
		}
		machines = append(machines, m)
	}
	return machines, nil
}

func owner(kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: kind, Name: name, UID: uid, Controller: ptr.To(true),
	}
}
