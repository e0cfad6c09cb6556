package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestDemoOnce runs `make demo-check`'s path: the example MachineDeployment
// becomes three running VMs, and everything is gone afterwards.
func TestDemoOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	var out bytes.Buffer
	err := run(t.Context(), options{
		example: "../../examples/machinedeployment.yaml",
		once:    true,
		timeout: time.Minute,
		workDir: t.TempDir(),
		out:     &out,
		log:     zap.NewNop().Sugar(),
	})
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"3/3 VMs running",
		"kubevirt://my-kubevirt-machine-5d8f7-0",
		"All VirtualMachines, VMIs, DataVolumes and Secrets are gone",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
