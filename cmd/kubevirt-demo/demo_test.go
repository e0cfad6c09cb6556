package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestDemoOnce runs `make demo-check`'s path: the TenantCluster prepares
// both clusters, the example MachineDeployment becomes three Machines with
// Ready Nodes, and deleting both leaves nothing.
func TestDemoOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	var out bytes.Buffer
	err := run(t.Context(), options{
		example: "../../examples/machinedeployment.yaml",
		once:    true,
		// The demo's own default: the test checks what happens, not how
		// fast (a minute was too short beside other tests at load 20).
		timeout: 3 * time.Minute,
		workDir: t.TempDir(),
		out:     &out,
		log:     zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"TenantCluster demo ready: namespace cluster-demo with preset kubermatic-standard",
		`The admission webhook refused the example with memory "lots": `,
		"spec.template.spec.providerSpec.value.cloudProviderSpec.virtualMachine.template.memory: Invalid value",
		"Machines 3/3, VMs 3 (running 3), Nodes ready 3/3",
		"Nothing left: no Machine, MachineSet, Node, VM, VMI, DataVolume or Secret",
		"Nothing left of the tenant: namespace cluster-demo is gone",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
