package webhook

import (
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestCombined: Kubermatic's one mutating webhook per kind defaults and
// refuses in the same answer: a valid object gets the Mutator's patch, an
// invalid one the Validator's refusal, judged after the defaults; an
// update that leaves the spec alone gets neither.
func TestCombined(t *testing.T) {
	m, v := handlers(t, fakeProvider{})
	c := &Combined{Mutator: m, Validator: v}

	resp := c.Handle(t.Context(), request(t, admissionv1.Create, deployment(validSpec, nil), nil))
	if !resp.Allowed || len(resp.Patches) == 0 {
		t.Fatalf("valid MachineDeployment: allowed %v with %d patches, want allowed with the defaults", resp.Allowed, len(resp.Patches))
	}

	negative := deployment(validSpec, func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Replicas = ptr.To[int32](-1) })
	resp = c.Handle(t.Context(), request(t, admissionv1.Create, negative, nil))
	if resp.Allowed || !strings.Contains(resp.Result.Message, "spec.replicas: Invalid value: -1") || resp.UID != "uid" {
		t.Errorf("negative replicas: allowed %v, uid %q, %v; want refused naming spec.replicas", resp.Allowed, resp.UID, resp.Result)
	}

	old := deployment(validSpec, nil)
	updated := old.DeepCopy()
	updated.Finalizers = []string{"foregroundDeletion"}
	updated.Annotations = map[string]string{"machinedeployment.clusters.k8s.io/revision": "2"}
	resp = c.Handle(t.Context(), request(t, admissionv1.Update, updated, old))
	if !resp.Allowed || len(resp.Patches) != 0 {
		t.Errorf("an update that leaves the spec alone: allowed %v with %d patches, want allowed unchanged", resp.Allowed, len(resp.Patches))
	}
}

// TestCombinedMachines: the controller's own updates of a Machine
// (finalizers, providerID, status through the object, annotations) are
// admitted unchanged; a spec change without the bypass is refused.
func TestCombinedMachines(t *testing.T) {
	m, v := handlers(t, fakeProvider{})
	c := &Combined{Mutator: m, Validator: v}
	md := deployment(validSpec, nil)
	machine := &clusterv1alpha1.Machine{
		TypeMeta:   metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "m"},
		Spec:       md.Spec.Template.Spec,
	}
	own := machine.DeepCopy()
	own.Finalizers = []string{"machine-delete-finalizer", "machine-node-delete-finalizer"}
	own.Spec.ProviderID = ptr.To("kubevirt://m")
	own.Annotations = map[string]string{"kkp-kubevirt.io/instance-down-since": "2026-12-01T00:00:00Z"}
	own.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}}
	if resp := c.Handle(t.Context(), request(t, admissionv1.Update, own, machine)); !resp.Allowed || len(resp.Patches) != 0 {
		t.Errorf("the controller's update: allowed %v with %d patches (%v), want allowed unchanged", resp.Allowed, len(resp.Patches), resp.Result)
	}
	changed := own.DeepCopy()
	changed.Spec.Versions.Kubelet = "1.34.0"
	if resp := c.Handle(t.Context(), request(t, admissionv1.Update, changed, own)); resp.Allowed || !strings.Contains(resp.Result.Message, "immutable") {
		t.Errorf("a spec change: allowed %v, %v; want refused as immutable", resp.Allowed, resp.Result)
	}
}

// TestKubeletConstraint: with Kubermatic's -kubernetes-version-constraints
// a kubelet outside the constraint is refused with the field path.
func TestKubeletConstraint(t *testing.T) {
	constraint, err := semver.NewConstraint(">= 1.34.0")
	if err != nil {
		t.Fatal(err)
	}
	m, v := handlers(t, fakeProvider{})
	m.kubelets, v.kubelets = constraint, constraint
	c := &Combined{Mutator: m, Validator: v}
	resp := c.Handle(t.Context(), request(t, admissionv1.Create, deployment(validSpec, nil), nil))
	if resp.Allowed || !strings.Contains(resp.Result.Message, `spec.template.spec.versions.kubelet: Invalid value: "v1.33.4": must meet the kubelet version constraint ">=1.34.0"`) {
		t.Errorf("kubelet v1.33.4 under >= 1.34.0: allowed %v, %v", resp.Allowed, resp.Result)
	}
	newer := deployment(validSpec, func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Template.Spec.Versions.Kubelet = "1.34.2" })
	if resp := c.Handle(t.Context(), request(t, admissionv1.Create, newer, nil)); !resp.Allowed {
		t.Errorf("kubelet 1.34.2 under >= 1.34.0 refused: %v", resp.Result)
	}
}
