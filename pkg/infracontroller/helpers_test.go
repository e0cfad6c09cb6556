package infracontroller_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flavors"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// logs holds everything the controllers of the package's tests logged,
// for tests that check what logs say (controller-runtime takes one logger
// per process).
var logs lockedBuffer

func init() {
	var out io.Writer = &logs
	if os.Getenv("INFRA_CONTROLLER_TEST_LOG") != "" {
		out = io.MultiWriter(&logs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(out)))
}

// lockedBuffer keeps the last logsKept to 2×logsKept bytes written to it;
// it is safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

const logsKept = 16 << 20

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 2*logsKept {
		b.buf.Next(b.buf.Len() - logsKept)
	}
	return b.buf.Write(p)
}

// String returns the bytes kept.
func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// running is a started manager with the infra-controller.
type running struct {
	controllers *infracontroller.Controllers
	stop        func()
}

// startController runs the infra-controller against cfg until stop is
// called or the test ends. qps 0 keeps the client's default limit, a
// negative one turns client-side limiting off.
func startController(tb testing.TB, cfg *rest.Config, o infracontroller.Options, counter *envtest.RequestCounter, qps float32) *running {
	tb.Helper()
	cfg = rest.CopyConfig(cfg)
	if counter != nil {
		cfg.WrapTransport = counter.Wrap
	}
	if qps != 0 {
		cfg.QPS, cfg.Burst = qps, max(2*int(qps), 1)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		tb.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:     scheme,
		Cache:      infracontroller.CacheOptions(o),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		tb.Fatalf("failed to create the manager: %v", err)
	}
	controllers, err := infracontroller.Setup(mgr, o)
	if err != nil {
		tb.Fatalf("failed to set up the controllers: %v", err)
	}
	return &running{controllers: controllers, stop: envtest.RunInBackground(tb, "manager", mgr.Start).Stop}
}

// createTenant creates a tenant namespace and, when kubeconfig is not nil,
// its kubeconfig Secret.
func createTenant(tb testing.TB, c ctrlruntimeclient.Client, name string, kubeconfig []byte) {
	tb.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		tb.Fatalf("failed to create namespace %s: %v", name, err)
	}
	if kubeconfig == nil {
		return
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "tenant-kubeconfig"},
		Data:       map[string][]byte{"kubeconfig": kubeconfig},
	}
	if err := c.Create(ctx, secret); err != nil {
		tb.Fatalf("failed to create the kubeconfig Secret in %s: %v", name, err)
	}
}

// quiesce waits until the flavor controller has not finished a reconcile
// for a while.
func quiesce(tb testing.TB, r *running) {
	tb.Helper()
	poll.Settled(tb, time.Minute, 500*time.Millisecond, "the flavor controller's reconciles", r.controllers.Flavors.Reconciles)
}

func object(gvk schema.GroupVersionKind, namespace, name string, labels map[string]string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

func get(ctx context.Context, c ctrlruntimeclient.Client, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}, u)
	return u, err
}

// withManaged returns labels plus our ownership label.
func withManaged(labels map[string]string) map[string]string {
	out := map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue}
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// flavorsOff switches every flavor set off.
func flavorsOff() flavors.Options {
	return flavors.Options{}
}

// vmSpec is the spec of a running VM as small as KubeVirt's schema allows.
func vmSpec() map[string]any {
	return map[string]any{
		"runStrategy": "Always",
		"template": map[string]any{"spec": map[string]any{"domain": map[string]any{
			"devices":   map[string]any{},
			"resources": map[string]any{"requests": map[string]any{"memory": "64Mi"}},
		}}},
	}
}
