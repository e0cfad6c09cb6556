package machinedeployment

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
)

func template(providerSpec string, labels map[string]string) *clusterv1alpha1.MachineTemplateSpec {
	return &clusterv1alpha1.MachineTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: clusterv1alpha1.MachineSpec{
			ProviderSpec: clusterv1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: []byte(providerSpec)}},
		},
	}
}

func TestTemplateHash(t *testing.T) {
	base := template(`{"a": 1, "b": {"c": "x"}}`, map[string]string{"pool": "a"})
	baseHash, err := templateHash(base)
	if err != nil {
		t.Fatal(err)
	}
	if errs := validation.IsValidLabelValue(baseHash); len(errs) > 0 {
		t.Errorf("hash %q is no label value: %v", baseHash, errs)
	}
	for _, tc := range []struct {
		name     string
		template *clusterv1alpha1.MachineTemplateSpec
		same     bool
	}{
		{name: "key order and whitespace", template: template(`{"b":{"c":"x"},"a":1}`, map[string]string{"pool": "a"}), same: true},
		{name: "hash label ignored", template: template(`{"a":1,"b":{"c":"x"}}`, map[string]string{"pool": "a", LabelTemplateHash: "old"}), same: true},
		{name: "providerSpec value", template: template(`{"a":2,"b":{"c":"x"}}`, map[string]string{"pool": "a"})},
		{name: "label", template: template(`{"a":1,"b":{"c":"x"}}`, map[string]string{"pool": "b"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := templateHash(tc.template)
			if err != nil {
				t.Fatal(err)
			}
			if (h == baseHash) != tc.same {
				t.Errorf("hash %q vs %q: equal = %v, want %v", h, baseHash, h == baseHash, tc.same)
			}
			same, err := sameTemplate(base, tc.template)
			if err != nil {
				t.Fatal(err)
			}
			if same != tc.same {
				t.Errorf("sameTemplate = %v, want %v", same, tc.same)
			}
		})
	}
	if _, ok := base.Labels[LabelTemplateHash]; ok {
		t.Error("hashing changed the template")
	}
}

func TestSetRevision(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		revision    int64
		want        map[string]string
		wantChanged bool
	}{
		{name: "first", annotations: map[string]string{}, revision: 1, want: map[string]string{common.RevisionAnnotation: "1"}, wantChanged: true},
		{name: "same", annotations: map[string]string{common.RevisionAnnotation: "2"}, revision: 2, want: map[string]string{common.RevisionAnnotation: "2"}},
		{
			name: "rollback appends history", annotations: map[string]string{common.RevisionAnnotation: "1"}, revision: 3, wantChanged: true,
			want: map[string]string{common.RevisionAnnotation: "3", common.RevisionHistoryAnnotation: "1"},
		},
		{
			name: "longer history", annotations: map[string]string{common.RevisionAnnotation: "3", common.RevisionHistoryAnnotation: "1"}, revision: 5, wantChanged: true,
			want: map[string]string{common.RevisionAnnotation: "5", common.RevisionHistoryAnnotation: "1,3"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if changed := setRevision(tc.annotations, tc.revision); changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.want, tc.annotations); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaxRevision(t *testing.T) {
	set := func(rev string) *clusterv1alpha1.MachineSet {
		return &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{common.RevisionAnnotation: rev}}}
	}
	if got := maxRevision([]*clusterv1alpha1.MachineSet{set("2"), set("garbage"), set("7"), set("-3"), {}}); got != 7 {
		t.Errorf("maxRevision = %d, want 7", got)
	}
	if got := maxRevision(nil); got != 0 {
		t.Errorf("maxRevision of nothing = %d, want 0", got)
	}
}
