package webhook_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"
)

// providerSpec returns a KubeVirt providerSpec.value; edit changes its
// cloudProviderSpec.
func providerSpec(t *testing.T, edit func(cps map[string]any)) *runtime.RawExtension {
	t.Helper()
	cps := map[string]any{
		"clusterName": "demo",
		"virtualMachine": map[string]any{"template": map[string]any{
			"cpus": "1", "memory": "2048M",
			"primaryDisk": map[string]any{"osImage": "http://127.0.0.1:8080/ubuntu.img", "size": "10Gi", "storageClassName": "standard"},
		}},
	}
	if edit != nil {
		edit(cps)
	}
	raw, err := json.Marshal(map[string]any{
		"cloudProvider": "kubevirt", "cloudProviderSpec": cps,
		"operatingSystem": "ubuntu", "operatingSystemSpec": map[string]any{},
		"sshPublicKeys": []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHkWcXl1Yc1uX1l2b6Hc9rQv7Q2m7K0b3E9fQm2Qz8Yx demo@example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: raw}
}

// providerSpecWith is providerSpec with one field of the envelope set.
func providerSpecWith(t *testing.T, key string, value any) *runtime.RawExtension {
	t.Helper()
	var envelope map[string]any
	if err := json.Unmarshal(providerSpec(t, nil).Raw, &envelope); err != nil {
		t.Fatal(err)
	}
	envelope[key] = value
	raw, err := json.Marshal(envelope)
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: raw}
}

func machineDeployment(t *testing.T, name string) *clusterv1alpha1.MachineDeployment {
	t.Helper()
	labels := map[string]string{"name": name}
	return &clusterv1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: clusterv1alpha1.MachineDeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Strategy: &clusterv1alpha1.MachineDeploymentStrategy{Type: "RollingUpdate", RollingUpdate: &clusterv1alpha1.MachineRollingUpdateDeployment{
				MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
			}},
			Template: clusterv1alpha1.MachineTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: clusterv1alpha1.MachineSpec{
					ProviderSpec: clusterv1alpha1.ProviderSpec{Value: providerSpec(t, nil)},
					Versions:     clusterv1alpha1.MachineVersionInfo{Kubelet: "1.33.4"},
				},
			},
		},
	}
}

// storageClass creates the infra StorageClass "standard" in region r1,
// zone z1, once.
func storageClass(t *testing.T, e *testEnv) {
	t.Helper()
	sc := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "standard"},
		Provisioner: "example.com/disk",
		AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: "topology.kubernetes.io/region", Values: []string{"r1"}},
			{Key: "topology.kubernetes.io/zone", Values: []string{"z1"}},
		}}},
	}
	if err := e.client.Create(t.Context(), sc); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	warmUp(t, e)
}

// TestMachineDeploymentRefused: the API server refuses bad
// MachineDeployments at create, with the field path of what is wrong.
func TestMachineDeploymentRefused(t *testing.T) {
	e := needEnv(t)
	storageClass(t, e)
	for _, tc := range []struct {
		name string
		edit func(md *clusterv1alpha1.MachineDeployment)
		want string
	}{
		{name: "bad-memory", want: `spec.template.spec.providerSpec.value.cloudProviderSpec.virtualMachine.template.memory: Invalid value: "lots"`,
			edit: func(md *clusterv1alpha1.MachineDeployment) {
				md.Spec.Template.Spec.ProviderSpec.Value = providerSpec(t, func(cps map[string]any) {
					cps["virtualMachine"].(map[string]any)["template"].(map[string]any)["memory"] = "lots"
				})
			}},
		{name: "missing-storage-class", want: "spec.template.spec.providerSpec.value.cloudProviderSpec.virtualMachine.template.primaryDisk.storageClassName",
			edit: func(md *clusterv1alpha1.MachineDeployment) {
				md.Spec.Template.Spec.ProviderSpec.Value = providerSpec(t, func(cps map[string]any) {
					cps["virtualMachine"].(map[string]any)["template"].(map[string]any)["primaryDisk"].(map[string]any)["storageClassName"] = "nowhere"
				})
			}},
		{name: "negative-replicas", want: "spec.replicas: Invalid value: -1",
			edit: func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Replicas = ptr.To[int32](-1) }},
		{name: "selector-not-matching", want: "spec.selector: Invalid value",
			edit: func(md *clusterv1alpha1.MachineDeployment) {
				md.Spec.Selector.MatchLabels = map[string]string{"name": "other"}
			}},
		{name: "empty-selector", want: "spec.selector must not be empty",
			edit: func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Selector = metav1.LabelSelector{} }},
		{name: "recreate", want: `spec.strategy.type: Unsupported value: "Recreate"`,
			edit: func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Strategy.Type = "Recreate" }},
		{name: "both-zero", want: "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"0\": may not be 0 when maxSurge is 0",
			edit: func(md *clusterv1alpha1.MachineDeployment) {
				md.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromString("0%"))
			}},
		{name: "unavailable-over-100", want: `spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater than 100%`,
			edit: func(md *clusterv1alpha1.MachineDeployment) {
				md.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("150%"))
			}},
		{name: "surge-not-a-percentage", want: `spec.strategy.rollingUpdate.maxSurge: Invalid value: "1x"`,
			edit: func(md *clusterv1alpha1.MachineDeployment) {
				md.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromString("1x"))
			}},
		{name: "no-kubelet", want: "spec.template.spec.versions.kubelet: Required value",
			edit: func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Template.Spec.Versions.Kubelet = "" }},
		{name: "bad-kubelet", want: `spec.template.spec.versions.kubelet: Invalid value: "latest"`,
			edit: func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Template.Spec.Versions.Kubelet = "latest" }},
		{name: "bad-ssh-key", want: `spec.template.spec.providerSpec.value.sshPublicKeys[0]: Invalid value: "ssh-ed25519 not-base64": must be an SSH public key`,
			edit: func(md *clusterv1alpha1.MachineDeployment) {
				md.Spec.Template.Spec.ProviderSpec.Value = providerSpecWith(t, "sshPublicKeys", []string{"ssh-ed25519 not-base64"})
			}},
		{name: "vm-patch-not-json", want: `spec.template.metadata.annotations[kkp-kubevirt.io/vm-patch]: Invalid value: "{": annotation kkp-kubevirt.io/vm-patch: not an RFC 6902 JSON patch`,
			edit: func(md *clusterv1alpha1.MachineDeployment) {
				md.Spec.Template.Annotations = map[string]string{vm.AnnotationVMPatch: "{"}
			}},
		{name: "vm-patch-renames", want: `spec.template.metadata.annotations[kkp-kubevirt.io/vm-patch]: Invalid value: ` +
			`"[{\"op\":\"replace\",\"path\":\"/metadata/name\",\"value\":\"x\"}]": annotation kkp-kubevirt.io/vm-patch: must not change metadata.name`,
			edit: func(md *clusterv1alpha1.MachineDeployment) {
				md.Spec.Template.Annotations = map[string]string{vm.AnnotationVMPatch: `[{"op":"replace","path":"/metadata/name","value":"x"}]`}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := machineDeployment(t, tc.name)
			tc.edit(md)
			err := e.client.Create(t.Context(), md)
			t.Log(err)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Create = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestMachineDeploymentDefaulted: a good MachineDeployment is stored with
// the provider's defaults in its template: the infra namespace annotation
// and the region and zone of its storage class.
func TestMachineDeploymentDefaulted(t *testing.T) {
	e := needEnv(t)
	storageClass(t, e)
	md := machineDeployment(t, "good")
	if err := e.client.Create(t.Context(), md); err != nil {
		t.Fatal(err)
	}
	stored := &clusterv1alpha1.MachineDeployment{}
	if err := e.client.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(md), stored); err != nil {
		t.Fatal(err)
	}
	spec := stored.Spec.Template.Spec
	if got := spec.Annotations["cluster.x-k8s.io/cluster-namespace"]; got != "default" {
		t.Errorf("infra namespace annotation = %q, want default", got)
	}
	if spec.Labels["topology.kubernetes.io/region"] != "r1" || spec.Labels["topology.kubernetes.io/zone"] != "z1" {
		t.Errorf("template labels = %v, want region r1 and zone z1", spec.Labels)
	}
}

// silentInfra returns a base64 kubeconfig of an infra API server that
// accepts connections and never answers.
func silentInfra(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = conn.Close() })
		}
	}()
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://%s", insecure-skip-tls-verify: true}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: tenant}}]
current-context: c
users: [{name: u, user: {token: t}}]
`, l.Addr())
	return base64.StdEncoding.EncodeToString([]byte(kubeconfig))
}

// TestUnreachableInfraAdmits: with an infra cluster that never answers, a
// MachineDeployment is admitted on its syntax within the budget (2 s), and
// the next one at once.
func TestUnreachableInfraAdmits(t *testing.T) {
	e := needEnv(t)
	kubeconfig := silentInfra(t)
	for i, limit := range []time.Duration{3 * time.Second, time.Second} {
		md := machineDeployment(t, fmt.Sprintf("unreachable-%d", i))
		md.Spec.Template.Spec.ProviderSpec.Value = providerSpec(t, func(cps map[string]any) {
			cps["auth"] = map[string]any{"kubeconfig": map[string]any{"value": kubeconfig}}
		})
		start := time.Now()
		err := e.client.Create(t.Context(), md)
		took := time.Since(start)
		t.Logf("create %d with the infra cluster silent: %v", i, took)
		if err != nil {
			t.Fatalf("Create = %v, want admitted", err)
		}
		if took > limit {
			t.Errorf("Create took %v, want at most %v", took, limit)
		}
	}
	// The mutating webhook waited out the budget (for the defaults); the
	// validating one then found the infra cluster paused, twice.
	if n := scraped(t, "machine_controller_webhook_infra_unchecked_total", "paused"); n < 2 {
		t.Errorf(`machine_controller_webhook_infra_unchecked_total{reason="paused"} = %v, want 2`, n)
	}
}

// scraped returns the value of a counter with one label on the
// controller-runtime registry (what /metrics serves).
func scraped(t *testing.T, name, label string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, m := range family.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == label {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
