package machine

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// TestMachineStatusWithoutSubresource runs the controller against a
// Machine CRD without the status subresource, as Kubermatic's own, then
// with it again: both times a new Machine gets its addresses and nodeRef
// stored, and only the first status write after each change of the CRD
// goes to the wrong place.
func TestMachineStatusWithoutSubresource(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	ctx := t.Context()
	env.ServeMachineStatus(t, false)
	fixture := newLinkFixture(t, env, "status", "m-1", "m-2")
	core, logs := observer.New(zap.InfoLevel)
	counter := startCountedController(t, env, Options{Provider: newFakeProvider(), Log: zap.New(core).Sugar()})
	switches := func() []string {
		var out []string
		for _, e := range logs.FilterMessageSnippet("Machine CRD serves").All() {
			out = append(out, e.Message)
		}
		return out
	}

	statusPatches := envtest.Request{Verb: "PATCH", Resource: "cluster.k8s.io/v1alpha1/machines/status"}
	linked := func(name string) {
		t.Helper()
		m := fixture.machine(name)
		if err := env.Client.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		poll.UntilTrue(t, 30*time.Second, name+" with its addresses and nodeRef stored", func() (bool, error) {
			if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(m), m); err != nil {
				t.Fatal(err)
			}
			return m.Status.NodeRef != nil && m.Status.NodeRef.Name == "node-"+name && len(m.Status.Addresses) > 0, nil
		})
	}
	linked("m-1")
	if n := counter.Counts()[statusPatches]; n != 1 {
		t.Errorf("%d status patches without the subresource, want 1 (the first, which found none)", n)
	}
	if got := switches(); len(got) != 1 || !strings.Contains(got[0], "serves no status subresource") {
		t.Errorf("logged switches %q, want one to writing statuses with the Machine", got)
	}

	env.ServeMachineStatus(t, true)
	before := counter.Counts()[statusPatches]
	linked("m-2")
	if n := counter.Counts()[statusPatches]; n <= before {
		t.Errorf("no status patch once the subresource is served again (%d before m-2, %d after)", before, n)
	}
	if got := switches(); len(got) != 2 || !strings.Contains(got[1], "serves the status subresource again") {
		t.Errorf("logged switches %q, want a second one back to the subresource", got)
	}
}
