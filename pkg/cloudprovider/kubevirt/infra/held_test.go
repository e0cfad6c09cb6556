package infra

import (
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// A held cache is kept while idle and stopped by its last Release: its
// informers stop, those of another namespace of the same kubeconfig do
// not, and the connection's cluster-scoped informers stop with its last
// cache. An index is added once per cache however often it is asked for,
// and a Hold of a client whose cache was stopped starts a new one.
func TestHoldRelease(t *testing.T) {
	env := sharedEnv(t)
	ctx := t.Context()
	clients := newClients(t, Options{IdleTimeout: 50 * time.Millisecond})
	get := func(kubeconfig []byte, namespace string) *Client {
		t.Helper()
		c, err := clients.Get(ctx, kubeconfig, namespace)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	hold := func(c *Client) *Held {
		t.Helper()
		h, err := clients.Hold(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	informer := func(h *Held, obj ctrlruntimeclient.Object) cache.Informer {
		t.Helper()
		i, err := h.Cache.GetInformer(ctx, obj)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	c1, c2 := get(env.KubeconfigBytes, "held-1"), get(env.KubeconfigBytes, "held-2")
	h1, h2 := hold(c1), hold(c1)
	other := hold(c2)
	vmis1, vmis2 := informer(h1, &kubevirtcorev1.VirtualMachineInstance{}), informer(other, &kubevirtcorev1.VirtualMachineInstance{})
	classes := informer(h1, &storagev1.StorageClass{})
	for _, h := range []*Held{h1, h2, h1} {
		if err := h.IndexField(ctx, &kubevirtcorev1.VirtualMachineInstance{}, "status.nodeName", func(ctrlruntimeclient.Object) []string { return nil }); err != nil {
			t.Fatalf("indexing a held cache again: %v", err)
		}
	}

	// Held caches outlive the idle timeout; the next Get sweeps.
	time.Sleep(100 * time.Millisecond)
	trigger, err := env.Kubeconfig("held-trigger")
	if err != nil {
		t.Fatal(err)
	}
	get(trigger, "")
	if n := clients.Len(); n != 3 {
		t.Errorf("%d clients after the idle timeout, want the 2 held ones and the new one", n)
	}

	clients.Release(c1.Key)
	if n := clients.Holds(c1.Key); n != 1 || vmis1.IsStopped() {
		t.Errorf("after one of two Releases: %d holds, informer stopped %v; want 1 hold, running", n, vmis1.IsStopped())
	}
	clients.Release(c1.Key)
	clients.Release(c1.Key) // one too many: nothing happens
	poll.UntilTrue(t, 10*time.Second, "the released namespace's informers stopped", func() (bool, error) { return vmis1.IsStopped(), nil })
	if vmis2.IsStopped() || classes.IsStopped() {
		t.Errorf("another namespace's informer stopped %v, the cluster-scoped one %v; want both running", vmis2.IsStopped(), classes.IsStopped())
	}
	clients.Release(c2.Key)
	poll.UntilTrue(t, 10*time.Second, "the connection's cluster-scoped informers stopped", func() (bool, error) {
		return vmis2.IsStopped() && classes.IsStopped(), nil
	})

	again := hold(c1)
	defer clients.Release(c1.Key)
	if again.Client == c1 {
		t.Error("a Hold after the last Release returned the stopped client")
	}
	if i := informer(again, &kubevirtcorev1.VirtualMachineInstance{}); !i.HasSynced() || i.IsStopped() {
		t.Error("the cache started again by Hold does not sync")
	}
	if _, err := clients.Hold(ctx, &Client{Namespace: "x"}); err == nil {
		t.Error("a Hold of a Client not returned by Get succeeded")
	}
}
