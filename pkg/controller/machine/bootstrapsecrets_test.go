package machine

import (
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	"k8c.io/machine-controller/sdk/bootstrap"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// The bootstrap Secrets are read from the cache of their namespace when the
// controller may list and watch Secrets there, and one by one from the API
// server when it may only get them; Secrets of other namespaces are always
// read from the API server.
func TestBootstrapSecretsCacheNeedsPermission(t *testing.T) {
	env := envtest.Start(t)
	ctx := t.Context()
	other := env.CreateNamespace(t, "configvars")
	for _, obj := range []ctrlruntimeclient.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bootstrap.CloudInitSettingsNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bootstrap", Namespace: bootstrap.CloudInitSettingsNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "configvar", Namespace: other}},
	} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	getOnly, err := env.UserKubeconfig("get-only", []string{"system:authenticated"}, "")
	if err != nil {
		t.Fatal(err)
	}
	grantGetSecrets(t, env, "get-only")
	for _, tc := range []struct {
		name       string
		kubeconfig []byte
		wantCached bool
	}{
		{name: "list and watch allowed", kubeconfig: env.KubeconfigBytes, wantCached: true},
		{name: "get only", kubeconfig: getOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counter := envtest.NewRequestCounter()
			b := newBootstrapSecretsFor(t, env, tc.kubeconfig, counter)
			startBootstrapSecrets(t, b, tc.wantCached)
			counter.Reset()
			for _, key := range []ctrlruntimeclient.ObjectKey{
				{Namespace: bootstrap.CloudInitSettingsNamespace, Name: "bootstrap"},
				{Namespace: other, Name: "configvar"},
			} {
				if err := b.Get(ctx, key, &corev1.Secret{}); err != nil {
					t.Errorf("failed to read Secret %s: %v", key, err)
				}
			}
			if err := b.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: bootstrap.CloudInitSettingsNamespace, Name: "absent"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
				t.Errorf("absent Secret: got %v, want NotFound", err)
			}
			wantGets := 3
			if tc.wantCached {
				wantGets = 1
			}
			if got := counter.Counts()[envtest.Request{Verb: "GET", Resource: "v1/secrets"}]; got != wantGets {
				t.Errorf("%d GETs of Secrets, want %d (%v)", got, wantGets, counter.Counts())
			}
		})
	}
}

// newBootstrapSecretsFor returns the reader of the identity of kubeconfig,
// counting its requests.
func newBootstrapSecretsFor(t *testing.T, env *envtest.Env, kubeconfig []byte, counter *envtest.RequestCounter) *bootstrapSecrets {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Wrap(counter.Wrap)
	c, err := ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &bootstrapSecrets{
		direct:   c,
		reviewer: c,
		newCache: func() (cache.Cache, error) {
			return cache.New(cfg, cache.Options{Scheme: env.Scheme, ByObject: map[ctrlruntimeclient.Object]cache.ByObject{
				&corev1.Secret{}: {Namespaces: map[string]cache.Config{bootstrap.CloudInitSettingsNamespace: {}}},
			}})
		},
		log: zap.NewNop().Sugar(),
	}
}

// startBootstrapSecrets runs b until the test ends and waits until it
// reads from its cache (wantCached) or has given the cache up.
func startBootstrapSecrets(t *testing.T, b *bootstrapSecrets, wantCached bool) {
	t.Helper()
	running := envtest.RunInBackground(t, "bootstrap Secrets", b.Start)
	if wantCached {
		poll.UntilTrue(t, 30*time.Second, "the bootstrap Secret cache", func() (bool, error) { return b.cached.Load() != nil, nil })
		return
	}
	select {
	case <-running.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the reader kept running without the permission to cache")
	}
	if b.cached.Load() != nil {
		t.Error("the reader caches without the permission to list and watch")
	}
}

// grantGetSecrets lets user get Secrets in every namespace, as the chart's
// ClusterRole does.
func grantGetSecrets(t *testing.T, env *envtest.Env, user string) {
	t.Helper()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-get-secrets"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-get-secrets"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, obj := range []ctrlruntimeclient.Object{role, binding} {
		if err := env.Client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
}
