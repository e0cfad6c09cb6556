package tenant

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestGetAndDeleteOurs(t *testing.T) {
	ours := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: "ours", Labels: map[string]string{ManagedByLabel: ManagedByValue}}}
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: "foreign"}}
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(ours, foreign).Build()
	ctx := t.Context()
	for _, name := range []string{"ours", "foreign", "absent"} {
		key := ctrlruntimeclient.ObjectKey{Namespace: "cluster-a", Name: name}
		if err := GetAndDeleteOurs(ctx, c, c, key, &corev1.ConfigMap{}, "a test object"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(ours), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("ours: got %v, want it deleted", err)
	}
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(foreign), &corev1.ConfigMap{}); err != nil {
		t.Errorf("an object without our label was deleted: %v", err)
	}
}
