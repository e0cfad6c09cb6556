package readiness

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

var kubeVirtGVK = schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "KubeVirt"}

func fakeReader(t *testing.T, objs ...ctrlruntimeclient.Object) ctrlruntimeclient.Reader {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := appsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

func deployment(generation int64, replicas int32, st appsv1.DeploymentStatus) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "virt-operator", Namespace: "kubevirt", Generation: generation},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
		Status:     st,
	}
}

func TestDeploymentRollout(t *testing.T) {
	key := types.NamespacedName{Namespace: "kubevirt", Name: "virt-operator"}
	tests := []struct {
		name string
		obj  *appsv1.Deployment
		want Result
	}{
		{"missing", nil, Result{Message: "not found"}},
		{"new generation", deployment(2, 2, appsv1.DeploymentStatus{ObservedGeneration: 1}), Result{Message: "generation 2 not yet observed"}},
		{"updating", deployment(1, 2, appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 1}), Result{Message: "1 of 2 replicas updated"}},
		{"old pods", deployment(1, 2, appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 2}), Result{Message: "1 old replicas still running"}},
		{"unavailable", deployment(1, 2, appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1}), Result{Message: "1 of 2 replicas available"}},
		{"ready", deployment(1, 2, appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}), Result{Ready: true, Message: "ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []ctrlruntimeclient.Object
			if tt.obj != nil {
				objs = append(objs, tt.obj)
			}
			got, err := DeploymentRollout{Key: key}.Evaluate(t.Context(), fakeReader(t, objs...))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDaemonSetRollout(t *testing.T) {
	ds := func(st appsv1.DaemonSetStatus) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "kube-multus-ds", Namespace: "kube-system", Generation: 3}, Status: st}
	}
	tests := []struct {
		name string
		obj  *appsv1.DaemonSet
		want Result
	}{
		{"new generation", ds(appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 3}), Result{Message: "generation 3 not yet observed"}},
		{"updating", ds(appsv1.DaemonSetStatus{ObservedGeneration: 3, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 1}), Result{Message: "1 of 3 pods updated"}},
		{"unavailable", ds(appsv1.DaemonSetStatus{ObservedGeneration: 3, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 2}), Result{Message: "2 of 3 pods available"}},
		{"ready", ds(appsv1.DaemonSetStatus{ObservedGeneration: 3, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 3}), Result{Ready: true, Message: "ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := DaemonSetRollout{Key: types.NamespacedName{Namespace: "kube-system", Name: "kube-multus-ds"}}
			got, err := check.Evaluate(t.Context(), fakeReader(t, tt.obj))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func kubeVirt(generation int64, status map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	obj.SetGroupVersionKind(kubeVirtGVK)
	obj.SetName("kubevirt")
	obj.SetNamespace("kubevirt")
	obj.SetGeneration(generation)
	return obj
}

func conds(pairs ...string) []any {
	var out []any
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]any{"type": pairs[i], "status": pairs[i+1]})
	}
	return out
}

func TestOperatorResource(t *testing.T) {
	tests := []struct {
		name   string
		status map[string]any
		want   Result
	}{
		{"no status", nil, Result{Message: "version v1.9.0 not yet rolled out"}},
		{
			"old version",
			map[string]any{"observedKubeVirtVersion": "v1.8.4", "conditions": conds("Available", "True")},
			Result{Message: "version v1.8.4 rolled out, waiting for v1.9.0"},
		},
		{
			"degraded wins",
			map[string]any{"observedKubeVirtVersion": "v1.9.0", "conditions": []any{
				map[string]any{"type": "Degraded", "status": "True", "reason": "HandlerCrash", "message": "virt-handler crashes"},
			}},
			Result{Message: "Degraded is True (HandlerCrash): virt-handler crashes"},
		},
		{
			"generation not observed",
			map[string]any{"observedKubeVirtVersion": "v1.9.0", "observedGeneration": int64(1), "conditions": conds("Available", "True")},
			Result{Message: "generation 2 not yet observed"},
		},
		{
			"not available",
			map[string]any{"observedKubeVirtVersion": "v1.9.0", "conditions": conds("Available", "False")},
			Result{Message: "Available is False"},
		},
		{
			"progressing",
			map[string]any{"observedKubeVirtVersion": "v1.9.0", "conditions": conds("Available", "True", "Progressing", "True")},
			Result{Message: "Progressing is True"},
		},
		{
			"ready",
			map[string]any{"observedKubeVirtVersion": "v1.9.0", "observedGeneration": int64(2), "conditions": conds("Available", "True", "Progressing", "False", "Degraded", "False")},
			Result{Ready: true, Message: "ready"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := OperatorResource{
				GVK: kubeVirtGVK, Key: types.NamespacedName{Namespace: "kubevirt", Name: "kubevirt"},
				VersionField: []string{"status", "observedKubeVirtVersion"}, Version: "v1.9.0",
			}
			got, err := check.Evaluate(t.Context(), fakeReader(t, kubeVirt(2, tt.status)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestForManifest(t *testing.T) {
	manifest := `---
# Source: kubevirt/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: kubevirt-operator
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: virt-operator
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: elsewhere
---
apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata:
  name: kubevirt
  namespace: kubevirt
`
	op := &Operator{GVK: kubeVirtGVK, VersionField: []string{"status", "observedKubeVirtVersion"}, Version: "v1.9.0"}
	checks, err := ForManifest(manifest, "kubevirt", op, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range checks {
		got = append(got, c.Object())
	}
	want := []string{"Deployment kubevirt/virt-operator", "DaemonSet elsewhere/agent", "KubeVirt kubevirt/kubevirt"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := ForManifest("apiVersion: a/b/c\nkind: X\n", "ns", nil, false); err == nil {
		t.Error("a bad apiVersion was accepted")
	}
}
