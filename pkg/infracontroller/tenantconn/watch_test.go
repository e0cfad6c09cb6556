package tenantconn

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/workqueue"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// requests starts the source of every kind of w on a fresh queue and
// returns the requests it yields.
func requests(t *testing.T, w *Watches) <-chan reconcile.Request {
	t.Helper()
	return requestsOf(t, w.Source())
}

// requestsOf starts src on a fresh queue and returns the requests it
// yields.
func requestsOf(t *testing.T, src source.Source) <-chan reconcile.Request {
	t.Helper()
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(queue.ShutDown)
	if err := src.Start(t.Context(), queue); err != nil {
		t.Fatal(err)
	}
	out := make(chan reconcile.Request, 100)
	go func() {
		for {
			req, shutdown := queue.Get()
			if shutdown {
				return
			}
			out <- req
			queue.Done(req)
		}
	}()
	return out
}

// startWatches runs w until the test ends and waits for Start to return.
func startWatches(t *testing.T, w *Watches) (stop func()) {
	t.Helper()
	return envtest.RunInBackground(t, "tenant watches", w.Start).Stop
}

// expectRequest waits a few seconds for a request of namespace.
func expectRequest(t *testing.T, reqs <-chan reconcile.Request, namespace string) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case req := <-reqs:
			if req == tenant.Request(namespace) {
				return
			}
			t.Errorf("unexpected request %v", req)
		case <-timeout:
			t.Fatalf("no request for %s", namespace)
		}
	}
}

// expectNoRequest checks that no request arrives for d.
func expectNoRequest(t *testing.T, reqs <-chan reconcile.Request, d time.Duration) {
	t.Helper()
	select {
	case req := <-reqs:
		t.Errorf("unexpected request %v", req)
	case <-time.After(d):
	}
}

// drain forgets the requests queued so far, e.g. those of an initial list.
func drain(reqs <-chan reconcile.Request) {
	for {
		select {
		case <-reqs:
		case <-time.After(300 * time.Millisecond):
			return
		}
	}
}

func class(name string, managed bool) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "example.com/" + name}
	if managed {
		sc.Labels = map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue}
	}
	return sc
}

func TestWatches(t *testing.T) {
	env := envtest.Start(t)
	ctx, c := t.Context(), env.Client
	w := &Watches{Kinds: []ctrlruntimeclient.Object{&storagev1.StorageClass{}}, Clients: &Clients{}}
	// Both are used before Start and before the source is started: the
	// watch and the event wait for them.
	must(t, w.Ensure("cluster-a", env.KubeconfigBytes))
	must(t, c.Create(ctx, class("existing", true)))
	stop := startWatches(t, w)
	time.Sleep(200 * time.Millisecond)
	reqs := requests(t, w)

	t.Run("an object that exists when the watch starts is reported", func(t *testing.T) {
		expectRequest(t, reqs, "cluster-a")
		drain(reqs)
	})
	t.Run("changes of managed objects are reported as the tenant namespace", func(t *testing.T) {
		sc := class("managed", true)
		must(t, c.Create(ctx, sc))
		expectRequest(t, reqs, "cluster-a")
		sc.Annotations = map[string]string{"x": "y"}
		must(t, c.Update(ctx, sc))
		expectRequest(t, reqs, "cluster-a")
		must(t, c.Delete(ctx, sc))
		expectRequest(t, reqs, "cluster-a")
	})
	t.Run("objects without our label are not watched", func(t *testing.T) {
		sc := class("foreign", false)
		must(t, c.Create(ctx, sc))
		must(t, c.Delete(ctx, sc))
		expectNoRequest(t, reqs, time.Second)
	})
	t.Run("the same kubeconfig keeps the watch", func(t *testing.T) {
		before := w.entries["cluster-a"]
		must(t, w.Ensure("cluster-a", env.KubeconfigBytes))
		if w.entries["cluster-a"] != before || w.Running() != 1 {
			t.Errorf("the watch was replaced (running %d)", w.Running())
		}
		expectNoRequest(t, reqs, 500*time.Millisecond)
	})
	t.Run("another kubeconfig restarts the watch", func(t *testing.T) {
		before := w.entries["cluster-a"]
		other, err := env.Kubeconfig("other")
		if err != nil {
			t.Fatal(err)
		}
		must(t, w.Ensure("cluster-a", other))
		if w.entries["cluster-a"] == before || w.Running() != 1 {
			t.Errorf("the watch was not replaced (running %d)", w.Running())
		}
		// The new watch lists the existing object again.
		expectRequest(t, reqs, "cluster-a")
		drain(reqs)
	})
	t.Run("a second namespace gets a watch of its own", func(t *testing.T) {
		must(t, w.Ensure("cluster-b", env.KubeconfigBytes))
		if got := w.Running(); got != 2 {
			t.Errorf("Running() = %d, want 2", got)
		}
		expectRequest(t, reqs, "cluster-b")
		drain(reqs)
	})
	t.Run("a stopped watch reports nothing", func(t *testing.T) {
		w.Stop("cluster-a")
		w.Stop("cluster-a")
		if got := w.Running(); got != 1 {
			t.Errorf("Running() = %d, want 1", got)
		}
		must(t, c.Create(ctx, class("after-stop", true)))
		expectRequest(t, reqs, "cluster-b")
		expectNoRequest(t, reqs, 500*time.Millisecond)
	})
	t.Run("stopping the manager stops every watch", func(t *testing.T) {
		stop()
		if got := w.Running(); got != 0 {
			t.Errorf("Running() = %d, want 0", got)
		}
		must(t, w.Ensure("cluster-c", env.KubeconfigBytes))
		if got := w.Running(); got != 0 {
			t.Errorf("Running() after Ensure on a stopped manager = %d, want 0", got)
		}
	})
}

// TestWatchesReportSync shows that a watch reports its tenant namespace
// once synced even when the tenant cluster holds none of our objects: what
// went while the namespace was not watched shows in no event.
func TestWatchesReportSync(t *testing.T) {
	env := envtest.Start(t)
	w := &Watches{Kinds: []ctrlruntimeclient.Object{&storagev1.StorageClass{}}, Clients: &Clients{}}
	reqs := requests(t, w)
	startWatches(t, w)
	must(t, w.Ensure("cluster-a", env.KubeconfigBytes))
	expectRequest(t, reqs, "cluster-a")
	expectNoRequest(t, reqs, time.Second)
}

// TestWatchesSubscribe shows one watch per tenant cluster serving several
// controllers: each hears only of the kinds it subscribed to.
func TestWatchesSubscribe(t *testing.T) {
	env := envtest.Start(t)
	ctx, c := t.Context(), env.Client
	w := &Watches{Kinds: []ctrlruntimeclient.Object{&storagev1.StorageClass{}, &storagev1.CSIDriver{}}, Clients: &Clients{}}
	classes, err := w.Subscribe(&storagev1.StorageClass{})
	must(t, err)
	drivers, err := w.Subscribe(&storagev1.CSIDriver{})
	must(t, err)
	if _, err := w.Subscribe(&corev1.ConfigMap{}); err == nil || !strings.Contains(err.Error(), "not among the watched kinds") {
		t.Errorf("Subscribe to an unwatched kind: %v, want an error", err)
	}
	must(t, w.Ensure("cluster-a", env.KubeconfigBytes))
	startWatches(t, w)
	classReqs, driverReqs, allReqs := requestsOf(t, classes), requestsOf(t, drivers), requests(t, w)
	poll.UntilTrue(t, 10*time.Second, "the watch of cluster-a synced", func() (bool, error) { _, synced := w.Reader("cluster-a"); return synced, nil })
	// Every subscriber hears once of the synced watch.
	for _, reqs := range []<-chan reconcile.Request{classReqs, driverReqs, allReqs} {
		expectRequest(t, reqs, "cluster-a")
		drain(reqs)
	}

	driver := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "subscribe.example.com", Labels: map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue}}}
	must(t, c.Create(ctx, driver))
	expectRequest(t, driverReqs, "cluster-a")
	expectRequest(t, allReqs, "cluster-a")
	expectNoRequest(t, classReqs, time.Second)

	must(t, c.Create(ctx, class("subscribe", true)))
	expectRequest(t, classReqs, "cluster-a")
	expectRequest(t, allReqs, "cluster-a")
	expectNoRequest(t, driverReqs, time.Second)
}

func TestWatchesUnreachable(t *testing.T) {
	retryMin, retryMax = 200*time.Millisecond, 400*time.Millisecond
	t.Cleanup(func() { retryMin, retryMax = time.Second, 2*time.Minute })
	var attempts atomic.Int64
	w := &Watches{
		Kinds: []ctrlruntimeclient.Object{&storagev1.StorageClass{}},
		Clients: &Clients{Wrap: func(cfg *rest.Config) {
			cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
				return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
					attempts.Add(1)
					return rt.RoundTrip(req)
				})
			}
		}},
	}
	stop := startWatches(t, w)
	reqs := requests(t, w)
	begin := time.Now()
	if err := w.Ensure("cluster-a", kubeconfig(t, "https://127.0.0.1:1")); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 100*time.Millisecond {
		t.Errorf("Ensure took %s", d)
	}
	time.Sleep(2 * time.Second)
	// Retries every 200ms, then every 400ms: about six, never a spin.
	if n := attempts.Load(); n == 0 || n > 20 {
		t.Errorf("%d requests to the unreachable cluster in 2s, want a few", n)
	}
	expectNoRequest(t, reqs, 0)
	if got := w.Running(); got != 1 {
		t.Errorf("Running() = %d, want 1", got)
	}
	begin = time.Now()
	stop()
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("stopping took %s", d)
	}
}

func TestWatchesEnsureErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		kinds      []ctrlruntimeclient.Object
		kubeconfig []byte
	}{
		{name: "no kinds", kubeconfig: kubeconfig(t, "https://127.0.0.1:1")},
		{name: "a broken kubeconfig", kinds: []ctrlruntimeclient.Object{&storagev1.StorageClass{}}, kubeconfig: []byte("{")},
		{name: "an empty kubeconfig", kinds: []ctrlruntimeclient.Object{&storagev1.StorageClass{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &Watches{Kinds: tc.kinds, Clients: &Clients{}}
			if err := w.Ensure("cluster-a", tc.kubeconfig); err == nil {
				t.Error("Ensure succeeded")
			}
			if diff := cmp.Diff(0, w.Running()); diff != "" {
				t.Errorf("Running (-want +got):\n%s", diff)
			}
			// A refused Ensure leaves no connection behind.
			if diff := cmp.Diff(0, w.Clients.Len()); diff != "" {
				t.Errorf("connections (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("no connections", func(t *testing.T) {
		w := &Watches{Kinds: []ctrlruntimeclient.Object{&storagev1.StorageClass{}}}
		if err := w.Ensure("cluster-a", kubeconfig(t, "https://127.0.0.1:1")); err == nil {
			t.Error("Ensure succeeded without Clients")
		}
	})
	t.Run("a second Start fails", func(t *testing.T) {
		w := &Watches{Kinds: []ctrlruntimeclient.Object{&storagev1.StorageClass{}}, Clients: &Clients{}}
		startWatches(t, w)
		poll.UntilTrue(t, 30*time.Second, "the first Start to begin", func() (bool, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.started, nil
		})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := w.Start(ctx); err == nil || errors.Is(err, context.Canceled) {
			t.Errorf("second Start = %v, want an error", err)
		}
	})
}

// kubeconfig renders a kubeconfig for server.
func kubeconfig(t *testing.T, server string) []byte {
	t.Helper()
	return kubeconfigWithToken(t, server, "t")
}

// kubeconfigWithToken is a kubeconfig of server with a bearer token.
func kubeconfigWithToken(t *testing.T, server, token string) []byte {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	kc.AuthInfos["c"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "c"}
	kc.CurrentContext = "c"
	out, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// must fails the test on an error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
