package kkp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestWritten: a file of UID changed after since is found, one of another
// owner or from before is not.
func TestWritten(t *testing.T) {
	if !AsUID() {
		t.Skip("needs root to own files as uid 65534")
	}
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	if err := os.WriteFile(old, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(old, UID, GID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(old, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Minute)
	for name, uid := range map[string]int{"theirs": UID, "mine": 0} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Written(since, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || filepath.Base(got[0]) != "theirs" {
		t.Errorf("Written = %v, want only theirs", got)
	}
}
