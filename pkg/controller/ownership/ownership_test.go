package ownership

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestSelector(t *testing.T) {
	for _, tc := range []struct {
		name     string
		selector metav1.LabelSelector
		template map[string]string
		wantErr  string
	}{
		{name: "matching", selector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, template: map[string]string{"a": "b", "c": "d"}},
		{name: "empty", template: map[string]string{"a": "b"}, wantErr: "spec.selector must not be empty"},
		{name: "not matching", selector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "x"}}, template: map[string]string{"a": "b"},
			wantErr: "spec.selector does not match spec.template.metadata.labels"},
		{name: "invalid", selector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}},
			wantErr: "invalid spec.selector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Selector(&tc.selector, tc.template)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("error = %v, want prefix %q", err, tc.wantErr)
			}
		})
	}
}

func TestControllerRef(t *testing.T) {
	ref := ControllerRef("MachineSet", &metav1.ObjectMeta{Name: "ms-1", UID: "uid-1"})
	if ref.APIVersion != "cluster.k8s.io/v1alpha1" || ref.Kind != "MachineSet" || ref.Name != "ms-1" || ref.UID != "uid-1" ||
		ref.Controller == nil || !*ref.Controller || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("ControllerRef = %+v", ref)
	}
}

func TestOrphanRequests(t *testing.T) {
	set := func(namespace, name string, selector map[string]string) *clusterv1alpha1.MachineSet {
		return &clusterv1alpha1.MachineSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec:       clusterv1alpha1.MachineSetSpec{Selector: metav1.LabelSelector{MatchLabels: selector}},
		}
	}
	scheme := runtime.NewScheme()
	if err := clusterv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		set("ns", "match", map[string]string{"pool": "a"}),
		set("ns", "other", map[string]string{"pool": "b"}),
		set("ns", "invalid", nil),
		set("elsewhere", "match", map[string]string{"pool": "a"}),
	).Build()
	selectorOf := func(ms *clusterv1alpha1.MachineSet) (labels.Selector, error) {
		return Selector(&ms.Spec.Selector, ms.Spec.Selector.MatchLabels)
	}
	orphan := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", Labels: map[string]string{"pool": "a"}}}
	owned := orphan.DeepCopy()
	owned.OwnerReferences = []metav1.OwnerReference{ControllerRef("MachineSet", set("ns", "x", nil))}
	for _, tc := range []struct {
		name string
		obj  *clusterv1alpha1.Machine
		want []reconcile.Request
	}{
		{name: "an orphan goes to the matching owners of its namespace", obj: orphan, want: []reconcile.Request{
			{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "match"}},
		}},
		{name: "a controlled object goes nowhere", obj: owned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := OrphanRequests(t.Context(), reader, tc.obj, &clusterv1alpha1.MachineSetList{}, selectorOf)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
