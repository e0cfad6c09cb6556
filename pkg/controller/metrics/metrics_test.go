package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// scrape gathers reg and returns every sample of the named family as
// "label=value,...": value (histograms: their sample count).
func scrape(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			key := fmt.Sprint(labels)
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// stubProvider answers every call with err.
type stubProvider struct {
	cloudprovider.Provider
	err error
}

func (p *stubProvider) Get(context.Context, *zap.SugaredLogger, *clusterv1alpha1.Machine, *cloudprovider.ProviderData) (cloudprovider.Instance, error) {
	return nil, p.err
}

func (p *stubProvider) Create(context.Context, *zap.SugaredLogger, *clusterv1alpha1.Machine, *cloudprovider.ProviderData, string) (cloudprovider.Instance, error) {
	return nil, p.err
}

func (p *stubProvider) Cleanup(context.Context, *zap.SugaredLogger, *clusterv1alpha1.Machine, *cloudprovider.ProviderData) (bool, error) {
	return p.err == nil, p.err
}

func TestInstrumentProvider(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Register(reg)
	if err != nil {
		t.Fatalf("second registration: %v", err)
	}
	if again.ProviderErrors != m.ProviderErrors {
		t.Error("a second registration does not reuse the registered metrics")
	}
	stub := &stubProvider{}
	p := m.InstrumentProvider(stub)
	log := zap.NewNop().Sugar()
	for _, e := range []error{nil, cloudprovider.ErrInstanceNotFound, cloudprovider.NewInvalidConfiguration("bad"), errors.New("timeout")} {
		stub.err = e
		_, _ = p.Get(t.Context(), log, &clusterv1alpha1.Machine{}, nil)
		_, _ = p.Create(t.Context(), log, &clusterv1alpha1.Machine{}, nil, "")
		_, _ = p.Cleanup(t.Context(), log, &clusterv1alpha1.Machine{}, nil)
	}
	wantDurations := map[string]float64{"[operation=cleanup]": 4, "[operation=create]": 4, "[operation=get]": 4}
	if diff := cmp.Diff(wantDurations, scrape(t, reg, "machine_controller_provider_operation_duration_seconds")); diff != "" {
		t.Errorf("durations (-want +got):\n%s", diff)
	}
	wantErrors := map[string]float64{
		"[kind=terminal operation=get]": 1, "[kind=transient operation=get]": 1,
		"[kind=terminal operation=create]": 1, "[kind=transient operation=create]": 2,
		"[kind=terminal operation=cleanup]": 1, "[kind=transient operation=cleanup]": 2,
	}
	if diff := cmp.Diff(wantErrors, scrape(t, reg, "machine_controller_provider_operation_errors_total")); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestWrapTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/namespaces/t/secrets/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	reg := prometheus.NewRegistry()
	m, err := Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: m.WrapTransport(http.DefaultTransport)}
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/apis/kubevirt.io/v1/namespaces/t/virtualmachines/vm-1"},
		{http.MethodGet, "/apis/kubevirt.io/v1/namespaces/t/virtualmachines"},
		{http.MethodGet, "/apis/kubevirt.io/v1/virtualmachineinstances?watch=true"},
		{http.MethodPost, "/apis/kubevirt.io/v1/namespaces/t/virtualmachines"},
		{http.MethodPatch, "/apis/kubevirt.io/v1/namespaces/t/virtualmachines/vm-1/status"},
		{http.MethodDelete, "/apis/cdi.kubevirt.io/v1beta1/namespaces/t/datavolumes/dv"},
		{http.MethodGet, "/api/v1/namespaces/t/secrets/missing"},
		{http.MethodPut, "/api/v1/namespaces/t"},
		{http.MethodGet, "/apis"},
	} {
		req, err := http.NewRequestWithContext(t.Context(), r.method, srv.URL+r.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	want := map[string]float64{
		"[code=200 resource=virtualmachines.kubevirt.io verb=get]":           1,
		"[code=200 resource=virtualmachines.kubevirt.io verb=list]":          1,
		"[code=200 resource=virtualmachineinstances.kubevirt.io verb=watch]": 1,
		"[code=200 resource=virtualmachines.kubevirt.io verb=create]":        1,
		"[code=200 resource=virtualmachines.kubevirt.io/status verb=patch]":  1,
		"[code=200 resource=datavolumes.cdi.kubevirt.io verb=delete]":        1,
		"[code=404 resource=secrets verb=get]":                               1,
		"[code=200 resource=namespaces verb=update]":                         1,
		"[code=200 resource=other verb=get]":                                 1,
	}
	if diff := cmp.Diff(want, scrape(t, reg, "machine_controller_infra_requests_total")); diff != "" {
		t.Errorf("infra requests (-want +got):\n%s", diff)
	}
}

func TestMachinesByPhase(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clusterv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	machine := func(name string, mutate func(*clusterv1alpha1.Machine)) *clusterv1alpha1.Machine {
		m := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"}}
		mutate(m)
		return m
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		machine("new", func(*clusterv1alpha1.Machine) {}),
		machine("linked-1", func(m *clusterv1alpha1.Machine) { m.Status.NodeRef = &corev1.ObjectReference{Name: "n1"} }),
		machine("linked-2", func(m *clusterv1alpha1.Machine) { m.Status.NodeRef = &corev1.ObjectReference{Name: "n2"} }),
		machine("broken", func(m *clusterv1alpha1.Machine) { m.Status.ErrorMessage = ptr.To("bad") }),
		machine("going", func(m *clusterv1alpha1.Machine) {
			m.DeletionTimestamp, m.Finalizers = &now, []string{"f"}
			m.Status.NodeRef = &corev1.ObjectReference{Name: "n3"}
		}),
	).Build()
	reg := prometheus.NewRegistry()
	if err := RegisterMachines(reg, c); err != nil {
		t.Fatal(err)
	}
	// A second registration replaces the first.
	if err := RegisterMachines(reg, c); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"[phase=Provisioning]": 1, "[phase=Running]": 2, "[phase=Failed]": 1, "[phase=Deleting]": 1}
	if diff := cmp.Diff(want, scrape(t, reg, "machine_controller_machines")); diff != "" {
		t.Errorf("machines (-want +got):\n%s", diff)
	}
}
