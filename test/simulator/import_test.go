package simulator_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// imageServer serves an image of a fixed size once released and counts
// requests and bytes written.
type imageServer struct {
	size     int
	release  chan struct{}
	once     sync.Once
	requests atomic.Int64
	bytes    atomic.Int64
}

func (s *imageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	select {
	case <-s.release:
	case <-r.Context().Done():
		return
	}
	n, _ := w.Write([]byte(strings.Repeat("x", s.size)))
	s.bytes.Add(int64(n))
}

func (s *imageServer) open() { s.once.Do(func() { close(s.release) }) }

func TestSimulatorImportsHTTPDataVolumesFromTheURL(t *testing.T) {
	env := envtest.Start(t)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := simulator.Add(mgr, simulator.Options{ImportHTTP: true}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()

	images := &imageServer{size: 3 << 20, release: make(chan struct{})}
	server := httptest.NewServer(images)
	defer server.Close()
	defer images.open()

	ns := env.CreateNamespace(t, "sim-import")
	vm := testVM(ns)
	vm.Spec.DataVolumeTemplates[0].Spec.Source.HTTP.URL = server.URL + "/img.qcow2"
	if err := env.Client.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the image download to start", func() bool { return images.requests.Load() > 0 })
	dvPhase := func(name string) cdicorev1beta1.DataVolumePhase {
		dv := &cdicorev1beta1.DataVolume{}
		if env.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: ns, Name: name}, dv) != nil {
			return ""
		}
		return dv.Status.Phase
	}
	// Without a real download the import would succeed at once (no ImportDelay).
	if got := dvPhase("vm-1"); got == cdicorev1beta1.Succeeded {
		t.Fatalf("DataVolume vm-1 succeeded before its image was served")
	}

	images.open()
	waitFor(t, "the DataVolumes to succeed", func() bool {
		return dvPhase("vm-1") == cdicorev1beta1.Succeeded && dvPhase("vm-1-data") == cdicorev1beta1.Succeeded
	})
	// The blank DataVolume downloads nothing; the HTTP one exactly once.
	if got := images.requests.Load(); got != 1 {
		t.Errorf("image requests = %d, want 1", got)
	}
	if got, want := images.bytes.Load(), int64(images.size); got != want {
		t.Errorf("image bytes served = %d, want %d", got, want)
	}
}
