package kkp

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// WaitServing waits up to timeout until url answers 200 while p runs; an
// https URL is verified with caPEM.
func WaitServing(tb testing.TB, p *Process, url string, caPEM []byte, timeout time.Duration) {
	tb.Helper()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	poll.Until(tb, timeout, func() error {
		p.Running(tb)
		resp, err := client.Get(url) //nolint:noctx // bounded by the client's timeout
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		return nil
	})
}

// webhookRefusal is what the webhook names when it refuses the probe of
// InstallWebhookConfiguration.
const webhookRefusal = "spec.template.spec.versions.kubelet"

// InstallWebhookConfiguration creates Kubermatic's webhook configuration
// pointing at address (the webhook's serving certificate signed by
// caPEM) in the user cluster of c, and waits up to timeout until the API
// server calls it: until a dry-run create of probe with the kubelet
// version "latest", which the webhook refuses, is refused for it.
func InstallWebhookConfiguration(tb testing.TB, c ctrlruntimeclient.Client, address string, caPEM []byte, probe *clusterv1alpha1.MachineDeployment, timeout time.Duration) {
	tb.Helper()
	cfg, err := WebhookConfiguration("https://"+address, caPEM)
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.Create(tb.Context(), cfg); err != nil {
		tb.Fatal(err)
	}
	refused := probe.DeepCopy()
	refused.Spec.Template.Spec.Versions.Kubelet = "latest"
	poll.Until(tb, timeout, func() error {
		err := c.Create(tb.Context(), refused.DeepCopy(), ctrlruntimeclient.DryRunAll)
		switch {
		case err == nil:
			return fmt.Errorf("waiting for a refusal naming %s, got none", webhookRefusal)
		case !strings.Contains(err.Error(), webhookRefusal):
			return fmt.Errorf("waiting for a refusal naming %s: %w", webhookRefusal, err)
		}
		return nil
	})
}
