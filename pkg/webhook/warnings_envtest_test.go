package webhook_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// warnings collects the API server's warnings, as kubectl prints them.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

// joined returns the warnings so far, separated by spaces.
func (w *warnings) joined() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.msgs, " ")
}

// TestLegacySpecWarns: a MachineDeployment in the flat format of KKP <=
// 2.20 is stored, and the client gets the conversion as a warning.
func TestLegacySpecWarns(t *testing.T) {
	e := needEnv(t)
	storageClass(t, e)
	got := &warnings{}
	cfg := rest.CopyConfig(e.config)
	cfg.WarningHandler = got
	client, err := ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{Scheme: e.client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(map[string]any{
		"cloudProvider": "kubevirt", "operatingSystem": "ubuntu", "operatingSystemSpec": map[string]any{},
		"cloudProviderSpec": map[string]any{"clusterName": "demo", "cpus": "1", "memory": "2Gi", "sourceURL": "http://127.0.0.1:8080/ubuntu.img",
			"pvcSize": "10Gi", "storageClassName": "standard"},
	})
	if err != nil {
		t.Fatal(err)
	}
	md := machineDeployment(t, "legacy")
	md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: raw}
	if err := client.Create(t.Context(), md); err != nil {
		t.Fatalf("Create = %v, want stored", err)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	t.Log(got.msgs)
	if len(got.msgs) != 1 || !strings.Contains(got.msgs[0], "flat format of KKP <= 2.20") {
		t.Errorf("warnings %q, want the conversion", got.msgs)
	}
}
