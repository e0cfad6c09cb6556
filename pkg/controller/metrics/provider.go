package metrics

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
)

// Error kinds of ProviderErrors.
const (
	// KindTerminal is an error the user must fix (cloudprovider.TerminalError).
	KindTerminal = "terminal"
	// KindTransient is any other error; it is retried.
	KindTransient = "transient"
)

// instrumented is a cloudprovider.Provider whose Get, Create and Cleanup
// are measured.
type instrumented struct {
	cloudprovider.Provider
	m   *Metrics
	now func() time.Time
}

// InstrumentProvider returns p with the latency and errors of its Get,
// Create and Cleanup calls recorded in m. ErrInstanceNotFound from Get is
// an answer, not an error.
func (m *Metrics) InstrumentProvider(p cloudprovider.Provider) cloudprovider.Provider {
	return &instrumented{Provider: p, m: m, now: time.Now}
}

// observe records one call of an operation that started at start.
func (p *instrumented) observe(operation string, start time.Time, err error) {
	p.m.ProviderDuration.WithLabelValues(operation).Observe(p.now().Sub(start).Seconds())
	if err == nil {
		return
	}
	kind := KindTransient
	if _, ok := cloudprovider.IsTerminal(err); ok {
		kind = KindTerminal
	}
	p.m.ProviderErrors.WithLabelValues(operation, kind).Inc()
}

// Get implements cloudprovider.Provider.
func (p *instrumented) Get(ctx context.Context, log *zap.SugaredLogger, machine *clusterv1alpha1.Machine, data *cloudprovider.ProviderData) (cloudprovider.Instance, error) {
	start := p.now()
	inst, err := p.Provider.Get(ctx, log, machine, data)
	if errors.Is(err, cloudprovider.ErrInstanceNotFound) {
		p.observe("get", start, nil)
	} else {
		p.observe("get", start, err)
	}
	return inst, err
}

// Create implements cloudprovider.Provider.
func (p *instrumented) Create(ctx context.Context, log *zap.SugaredLogger, machine *clusterv1alpha1.Machine, data *cloudprovider.ProviderData, userdata string) (cloudprovider.Instance, error) {
	start := p.now()
	inst, err := p.Provider.Create(ctx, log, machine, data, userdata)
	p.observe("create", start, err)
	return inst, err
}

// Cleanup implements cloudprovider.Provider.
func (p *instrumented) Cleanup(ctx context.Context, log *zap.SugaredLogger, machine *clusterv1alpha1.Machine, data *cloudprovider.ProviderData) (bool, error) {
	start := p.now()
	done, err := p.Provider.Cleanup(ctx, log, machine, data)
	p.observe("cleanup", start, err)
	return done, err
}
