package trap

import (
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestTrapSprings: read as kubectl reads a kubeconfig, the payloads do run
// the program and reach the capture server, so a Check that passes means
// the reader refused them.
func TestTrapSprings(t *testing.T) {
	tr := New(t)
	for _, p := range tr.Payloads() {
		cfg, err := clientcmd.RESTConfigFromKubeConfig(p.Kubeconfig)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		// The capture server answers 401: the error is expected.
		_, _ = cs.Discovery().ServerVersion()
	}
	if _, err := os.Stat(tr.Marker); err != nil {
		t.Errorf("the exec payload did not create the marker: %v", err)
	}
	if !tr.leaked.Load() {
		t.Error("the tokenFile payload did not send the token file")
	}
	if n := tr.requests.Load(); n < 2 {
		t.Errorf("the capture server got %d requests, want one per payload at least", n)
	}
}
