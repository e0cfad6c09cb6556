package webhook_test

import (
	"strings"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/webhook"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

func machine(t *testing.T, name string) *clusterv1alpha1.Machine {
	t.Helper()
	return &clusterv1alpha1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: clusterv1alpha1.MachineSpec{
			ProviderSpec: clusterv1alpha1.ProviderSpec{Value: providerSpec(t, nil)},
			Versions:     clusterv1alpha1.MachineVersionInfo{Kubelet: "1.33.4"},
		},
	}
}

// TestMachineImmutable: a Machine's spec changes only with the one-shot
// bypass annotation, which the webhook removes; spec.providerID is set once
// and then never changes; metadata changes are always admitted.
func TestMachineImmutable(t *testing.T) {
	e := needEnv(t)
	storageClass(t, e)
	ctx := t.Context()
	m := machine(t, "immutable")
	if err := e.client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got := m.Spec.Annotations["cluster.x-k8s.io/cluster-namespace"]; got != "default" {
		t.Errorf("created Machine's spec annotation = %q, want the default infra namespace", got)
	}
	steps := []struct {
		name    string
		edit    func(m *clusterv1alpha1.Machine)
		refused string
		check   func(t *testing.T, m *clusterv1alpha1.Machine)
	}{
		{name: "labels", edit: func(m *clusterv1alpha1.Machine) { m.Labels = map[string]string{"a": "b"} }},
		{name: "taints without the annotation", refused: "spec: Forbidden: the spec of a Machine is immutable",
			edit: func(m *clusterv1alpha1.Machine) {
				m.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
			}},
		{name: "taints with the annotation",
			edit: func(m *clusterv1alpha1.Machine) {
				m.Annotations = map[string]string{webhook.AnnotationBypassSpecImmutability: "true"}
				m.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
			},
			check: func(t *testing.T, m *clusterv1alpha1.Machine) {
				t.Helper()
				if _, ok := m.Annotations[webhook.AnnotationBypassSpecImmutability]; ok || len(m.Spec.Taints) != 1 {
					t.Errorf("annotations %v, taints %v: want the annotation removed and the taint stored", m.Annotations, m.Spec.Taints)
				}
			}},
		{name: "another change after the one-shot", refused: "spec: Forbidden",
			edit: func(m *clusterv1alpha1.Machine) { m.Spec.Taints = nil }},
		{name: "providerID set once", edit: func(m *clusterv1alpha1.Machine) { m.Spec.ProviderID = ptr.To("kubevirt://immutable") }},
		{name: "providerID changed even with the annotation", refused: "spec.providerID: Forbidden: field is immutable once set",
			edit: func(m *clusterv1alpha1.Machine) {
				m.Annotations = map[string]string{webhook.AnnotationBypassSpecImmutability: "true"}
				m.Spec.ProviderID = ptr.To("kubevirt://other")
			}},
	}
	for _, step := range steps {
		current := &clusterv1alpha1.Machine{}
		if err := e.client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(m), current); err != nil {
			t.Fatal(err)
		}
		step.edit(current)
		err := e.client.Update(ctx, current)
		switch {
		case step.refused == "" && err != nil:
			t.Fatalf("%s: Update = %v, want admitted", step.name, err)
		case step.refused != "" && (err == nil || !strings.Contains(err.Error(), step.refused)):
			t.Fatalf("%s: Update = %v, want an error containing %q", step.name, err, step.refused)
		case step.check != nil:
			step.check(t, current)
		}
	}
}

// TestOtherControllersObjects: objects labelled for another controller
// are not admitted by this webhook (the object selector skips them), so an
// invalid one is stored.
func TestOtherControllersObjects(t *testing.T) {
	e := needEnv(t)
	m := machine(t, "foreign")
	m.Labels = map[string]string{"machine.k8s.io/controller": "other"}
	m.Spec.Versions.Kubelet = "not-a-version"
	m.Spec.ProviderSpec.Value = providerSpec(t, func(cps map[string]any) { cps["unknown"] = true })
	if err := e.client.Create(t.Context(), m); err != nil {
		t.Fatalf("Create = %v, want stored unchecked", err)
	}
}

// TestControllerExempt: the chart's matchConditions exempt the
// controller's ServiceAccount, so its writes never wait for the webhook;
// another identity's identical write is refused.
func TestControllerExempt(t *testing.T) {
	e := needEnv(t)
	for _, tc := range []struct {
		user    string
		refused bool
	}{
		{user: "system:serviceaccount:" + chartNamespace + ":machine-controller"},
		{user: "system:serviceaccount:" + chartNamespace + ":someone-else", refused: true},
	} {
		cfg := rest.CopyConfig(e.config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: tc.user, Groups: []string{"system:masters"}}
		client, err := ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{Scheme: e.client.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		m := machine(t, "exempt-"+strings.ReplaceAll(tc.user[strings.LastIndex(tc.user, ":")+1:], "-", ""))
		m.Spec.Versions.Kubelet = "not-a-version"
		err = client.Create(t.Context(), m)
		if refused := err != nil && strings.Contains(err.Error(), "spec.versions.kubelet"); refused != tc.refused || (err != nil && !refused) {
			t.Errorf("%s: Create = %v, want refused %v", tc.user, err, tc.refused)
		}
	}
}

// TestMachineSetRefusedAndDefaulted: MachineSets get the same template
// checks and defaults as MachineDeployments.
func TestMachineSetRefusedAndDefaulted(t *testing.T) {
	e := needEnv(t)
	storageClass(t, e)
	md := machineDeployment(t, "set")
	set := func() *clusterv1alpha1.MachineSet {
		return &clusterv1alpha1.MachineSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "set"},
			Spec:       clusterv1alpha1.MachineSetSpec{Replicas: md.Spec.Replicas, Selector: md.Spec.Selector, Template: *md.Spec.Template.DeepCopy()},
		}
	}
	bad := set()
	bad.Spec.Selector.MatchLabels = map[string]string{"name": "other"}
	bad.Spec.Template.Spec.Versions.Kubelet = ""
	err := e.client.Create(t.Context(), bad)
	for _, want := range []string{"spec.selector: Invalid value", "spec.template.spec.versions.kubelet: Required value"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Create = %v, want an error containing %q", err, want)
		}
	}
	good := set()
	if err := e.client.Create(t.Context(), good); err != nil {
		t.Fatal(err)
	}
	if got := good.Spec.Template.Spec.Annotations["cluster.x-k8s.io/cluster-namespace"]; got != "default" {
		t.Errorf("stored template annotation = %q, want the default infra namespace", got)
	}
}
