package kkp

import (
	"strings"
	"testing"
)

// TestTestdata: the facts decode and name what KKP names.
func TestTestdata(t *testing.T) {
	cfg, err := WebhookConfiguration("https://127.0.0.1:9876", []byte("ca"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "machine-controller.kubermatic.io" || len(cfg.Webhooks) != 2 ||
		*cfg.Webhooks[0].ClientConfig.URL != "https://127.0.0.1:9876/machinedeployments" ||
		*cfg.Webhooks[1].ClientConfig.URL != "https://127.0.0.1:9876/machines" {
		t.Errorf("webhook configuration = %+v", cfg)
	}
	if got := strings.Join(ControllerArgs("/d"), " "); !strings.HasPrefix(got, "-kubeconfig /d/kubeconfig -health-probe-address 0.0.0.0:8085") {
		t.Errorf("controller args = %s", got)
	}
	if got := strings.Join(WebhookArgs("/d", "cluster-a"), " "); !strings.Contains(got, "-namespace cluster-a") {
		t.Errorf("webhook args = %s", got)
	}
}
