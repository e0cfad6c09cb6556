package envtest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// machineWebhookServeTimeout bounds how long WaitServing waits for a
// webhook server to accept connections.
const machineWebhookServeTimeout = 30 * time.Second

// WithMachineWebhook installs the admission webhook configurations the
// machine-controller chart renders with its default values, pointed at a
// local address with a certificate of the test's own. The caller serves
// them (machine-controller's webhook, see Env.MachineWebhook): with the
// chart's failurePolicy Fail, nothing of cluster.k8s.io is stored before.
func WithMachineWebhook() Option {
	return func(o *options) { o.machineWebhook = true }
}

// MachineWebhookConfigurations returns the mutating and the validating
// webhook configuration the machine-controller chart renders with its
// default values.
func MachineWebhookConfigurations() (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	for kind, into := range map[string]any{"MutatingWebhookConfiguration": mutating, "ValidatingWebhookConfiguration": validating} {
		obj, err := ChartObject("machine-controller", kind)
		if err != nil {
			return nil, nil, err
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, into, true); err != nil {
			return nil, nil, fmt.Errorf("failed to decode the machine-controller chart's %s: %w", kind, err)
		}
	}
	return mutating, validating, nil
}

// webhookInstallOptions makes envtest install the chart's webhook
// configurations.
func webhookInstallOptions() (crenvtest.WebhookInstallOptions, error) {
	mutating, validating, err := MachineWebhookConfigurations()
	if err != nil {
		return crenvtest.WebhookInstallOptions{}, err
	}
	return crenvtest.WebhookInstallOptions{
		MutatingWebhooks:   []*admissionregistrationv1.MutatingWebhookConfiguration{mutating},
		ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{validating},
	}, nil
}

// WebhookServing is where the webhooks installed by WithMachineWebhook
// must be served, and the serving certificate the API server trusts.
type WebhookServing struct {
	Host              string
	Port              int
	CertFile, KeyFile string
	// CAData is the PEM of the CA that signed the certificate.
	CAData []byte
}

// MachineWebhook returns where to serve the webhooks WithMachineWebhook
// installed; ok is false without that option.
func (e *Env) MachineWebhook() (serving WebhookServing, ok bool) {
	wo := e.env.WebhookInstallOptions
	if len(wo.MutatingWebhooks) == 0 {
		return WebhookServing{}, false
	}
	return WebhookServing{
		Host: wo.LocalServingHost, Port: wo.LocalServingPort,
		CertFile: filepath.Join(wo.LocalServingCertDir, "tls.crt"), KeyFile: filepath.Join(wo.LocalServingCertDir, "tls.key"),
		CAData: wo.LocalServingCAData,
	}, true
}

// Address is host:port.
func (w WebhookServing) Address() string {
	return net.JoinHostPort(w.Host, strconv.Itoa(w.Port))
}

// WaitServing waits until the address accepts TLS connections.
func (w WebhookServing) WaitServing(ctx context.Context) error {
	deadline := time.Now().Add(machineWebhookServeTimeout)
	for {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", w.Address(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only probes that the port serves
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the webhook does not serve at %s: %w", w.Address(), err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}
