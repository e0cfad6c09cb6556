package tenant

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestCreate(t *testing.T) {
	secret := func(labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: "csi-token", Labels: labels}}
	}
	ours := map[string]string{ManagedByLabel: ManagedByValue}
	for _, tc := range []struct {
		name     string
		existing *corev1.Secret
		want     Created
	}{
		{name: "absent", want: CreatedNow},
		// What a cache behind our own write does not show: our label on
		// the object in the way makes it ours, never a foreign one.
		{name: "ours, created before", existing: secret(ours), want: CreatedBefore},
		{name: "foreign", existing: secret(map[string]string{"app": "x"}), want: Foreign},
		{name: "another controller's value", existing: secret(map[string]string{ManagedByLabel: "someone-else"}), want: Foreign},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder()
			if tc.existing != nil {
				b = b.WithObjects(tc.existing)
			}
			c := b.Build()
			got, err := Create(t.Context(), c, c, secret(ours))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Create = %d, want %d", got, tc.want)
			}
		})
	}
}
