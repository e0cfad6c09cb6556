package tenantconn

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

func TestAccessConnect(t *testing.T) {
	secret := func(data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: "tenant-kubeconfig"}, Data: data}
	}
	for _, tc := range []struct {
		name        string
		secret      *corev1.Secret
		wantClient  bool
		wantErr     string
		wantWatches int
	}{
		{name: "no Secret: nothing, and the old watch goes"},
		{name: "no key", secret: secret(map[string][]byte{"other": []byte("x")}), wantErr: `has no key "kubeconfig"`},
		{name: "not a kubeconfig", secret: secret(map[string][]byte{"kubeconfig": []byte("x: [")}), wantErr: "not a valid kubeconfig"},
		{name: "a kubeconfig: client and watch", secret: secret(map[string][]byte{"kubeconfig": kubeconfig(t, "https://127.0.0.1:1")}), wantClient: true, wantWatches: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder()
			if tc.secret != nil {
				b = b.WithObjects(tc.secret)
			}
			reader := b.Build()
			a := NewAccess(AccessOptions{SecretName: "tenant-kubeconfig", SecretKey: "kubeconfig", Scheme: clientgoscheme.Scheme,
				Kinds: []ctrlruntimeclient.Object{&storagev1.StorageClass{}}})
			// A watch of an earlier kubeconfig, which must go unless a
			// kubeconfig replaces it.
			must(t, a.Watches.Ensure("cluster-a", kubeconfig(t, "https://127.0.0.1:2")))
			c, err := a.Connect(t.Context(), reader, "cluster-a")
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Connect error = %v, want %q", err, tc.wantErr)
			}
			if (c != nil) != tc.wantClient {
				t.Errorf("client = %v, want one: %t", c, tc.wantClient)
			}
			if n := a.Watches.Running(); n != tc.wantWatches {
				t.Errorf("running watches = %d, want %d", n, tc.wantWatches)
			}
		})
	}
}

func TestAccessTenant(t *testing.T) {
	kc := map[string][]byte{"kubeconfig": kubeconfig(t, "https://127.0.0.1:1")}
	reader := fake.NewClientBuilder().WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster-a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster-torn", Annotations: map[string]string{tenant.DeletingAnnotation: "true"}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: "tenant-kubeconfig"}, Data: kc},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-torn", Name: "tenant-kubeconfig"}, Data: kc},
	).Build()
	for _, tc := range []struct {
		namespace   string
		wantClient  bool
		wantWatches int
	}{
		{namespace: "cluster-a", wantClient: true, wantWatches: 1},
		{namespace: "cluster-torn"},
		{namespace: "cluster-missing"},
	} {
		t.Run(tc.namespace, func(t *testing.T) {
			a := NewAccess(AccessOptions{SecretName: "tenant-kubeconfig", SecretKey: "kubeconfig", Scheme: clientgoscheme.Scheme,
				Kinds: []ctrlruntimeclient.Object{&storagev1.StorageClass{}}})
			must(t, a.Watches.Ensure(tc.namespace, kc["kubeconfig"]))
			namespace, c, err := a.Tenant(t.Context(), reader, tenant.Matcher{Prefix: tenant.DefaultPrefix}, tenant.Request(tc.namespace))
			if err != nil {
				t.Fatal(err)
			}
			if (c != nil) != tc.wantClient || (namespace != "") != tc.wantClient {
				t.Errorf("Tenant = %q, %v; want a client: %t", namespace, c, tc.wantClient)
			}
			if n := a.Watches.Running(); n != tc.wantWatches {
				t.Errorf("running watches = %d, want %d", n, tc.wantWatches)
			}
		})
	}
}
