package tenant

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestMatcher(t *testing.T) {
	m := Matcher{Prefix: DefaultPrefix}
	for _, tc := range []struct {
		namespace string
		want      bool
	}{
		{namespace: "cluster-abc", want: true},
		{namespace: "cluster-", want: false},
		{namespace: "default", want: false},
		{namespace: "my-cluster-abc", want: false},
		{namespace: "", want: false},
	} {
		t.Run(tc.namespace, func(t *testing.T) {
			if got := m.IsTenant(tc.namespace); got != tc.want {
				t.Errorf("IsTenant(%q) = %v, want %v", tc.namespace, got, tc.want)
			}
		})
	}
	t.Run("empty prefix matches nothing and fails validation", func(t *testing.T) {
		empty := Matcher{}
		if empty.IsTenant("cluster-abc") {
			t.Error("an empty prefix matched a namespace")
		}
		if empty.Validate() == nil {
			t.Error("Validate accepted an empty prefix")
		}
	})
}

func TestLiveAndList(t *testing.T) {
	now := metav1.Now()
	objs := []ctrlruntimeclient.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster-live"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster-torn", Annotations: map[string]string{DeletingAnnotation: "true"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster-gone", DeletionTimestamp: &now, Finalizers: []string{"kubernetes"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
	}
	reader := fake.NewClientBuilder().WithObjects(objs...).Build()
	m := Matcher{Prefix: DefaultPrefix}
	names, err := m.List(t.Context(), reader)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"cluster-live"}, names); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		want bool
	}{
		{name: "cluster-live", want: true},
		{name: "cluster-torn"},
		{name: "cluster-gone"},
		{name: "cluster-missing"},
		{name: "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ok, err := m.Live(t.Context(), reader, Request(tc.name))
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.want {
				t.Errorf("Live(%s) = %v, want %v", tc.name, ok, tc.want)
			}
		})
	}
}
