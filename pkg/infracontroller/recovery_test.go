package infracontroller_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// outageLength is how long the API server is down in TestRecovery: long
// enough for client-go's reflector backoff, unbounded, to reach 12.8 s and
// more (with jitter, up to twice that).
const outageLength = 30 * time.Second

// recoveryBound is how soon after the API server is back the controller
// must have caught up with what happened since.
const recoveryBound = 15 * time.Second

// TestRecovery stops the infra kube-apiserver for outageLength and checks
// that, once it is back, a new tenant namespace gets its presets and a
// deleted copy comes back within recoveryBound.
func TestRecovery(t *testing.T) {
	infra := envtest.Start(t, envtest.WithKubeVirt())
	ctx, c := t.Context(), infra.Client
	o := infracontroller.DefaultOptions()
	o.EnableStorageClasses = false
	startController(t, infra.Config, o, nil, -1)
	createTenant(t, c, "cluster-before", nil)
	preset := builtins[0]
	poll.Until(t, wait, func() error { return hasCopy(ctx, c, preset.gvk, "cluster-before", preset.name, nil, preset.spec) })

	if err := infra.RestartAPIServer(ctx, outageLength); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	waitForAPIServer(ctx, t, c)
	t.Logf("API server answering %s after its restart", time.Since(back).Round(100*time.Millisecond))

	t.Run("a deleted copy comes back", func(t *testing.T) {
		copied, err := get(ctx, c, preset.gvk, "cluster-before", preset.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, copied); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		poll.Until(t, 4*recoveryBound, func() error { return hasCopy(ctx, c, preset.gvk, "cluster-before", preset.name, nil, preset.spec) })
		checkRecovery(t, "deleted copy back", time.Since(start))
	})
	t.Run("a new tenant namespace gets its presets", func(t *testing.T) {
		start := time.Now()
		createTenant(t, c, "cluster-after", nil)
		poll.Until(t, 4*recoveryBound, func() error { return hasCopy(ctx, c, preset.gvk, "cluster-after", preset.name, nil, preset.spec) })
		checkRecovery(t, "new namespace's presets", time.Since(start))
	})
}

// waitForAPIServer waits until the API server answers c again.
func waitForAPIServer(ctx context.Context, t *testing.T, c ctrlruntimeclient.Client) {
	t.Helper()
	poll.Until(t, time.Minute, func() error { return c.List(ctx, &corev1.NamespaceList{}) })
}

func checkRecovery(t *testing.T, what string, took time.Duration) {
	t.Helper()
	t.Logf("%s within %s of the API server's return", what, took.Round(100*time.Millisecond))
	if took > recoveryBound {
		t.Errorf("%s took %s, want at most %s", what, took, recoveryBound)
	}
}
