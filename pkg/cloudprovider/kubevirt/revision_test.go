package kubevirt

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestTemplateRevision(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	revision := func(patch string) string {
		t.Helper()
		got, err := f.provider.TemplateRevision(ctx, machineSpec(f.spec(t, patch)))
		if err != nil {
			t.Fatalf("TemplateRevision: %v", err)
		}
		return got
	}
	f.counter.Reset()
	if got := revision(""); got != "" {
		t.Errorf("without networks: revision %q, want none", got)
	}
	if got := f.counter.Counts(); len(got) != 0 {
		t.Errorf("a template without networks cost infra requests: %v", got)
	}
	withNetwork := `cloudProviderSpec: {virtualMachine: {networks: [{name: tenant-net}]}}`
	missing := revision(withNetwork)
	if missing == "" {
		t.Fatal("a missing NetworkAttachmentDefinition gives no revision")
	}

	nad := unstructuredObject("k8s.cni.cncf.io", "v1", "NetworkAttachmentDefinition", f.namespace, "tenant-net")
	if err := unstructured.SetNestedField(nad.Object, `{"cniVersion":"0.3.1","type":"bridge","bridge":"br1"}`, "spec", "config"); err != nil {
		t.Fatal(err)
	}
	f.create(t, nad)
	first := revision(withNetwork)
	if first == missing || first == "" {
		t.Errorf("creating the NetworkAttachmentDefinition left the revision at %q", first)
	}
	if again := revision(withNetwork); again != first {
		t.Errorf("revision not stable: %q then %q", first, again)
	}
	// Read from the API server: no cache to wait for.
	if err := unstructured.SetNestedField(nad.Object, `{"cniVersion":"0.3.1","type":"bridge","bridge":"br2"}`, "spec", "config"); err != nil {
		t.Fatal(err)
	}
	if err := f.env.Client.Update(ctx, nad); err != nil {
		t.Fatal(err)
	}
	if changed := revision(withNetwork); changed == first {
		t.Error("a new CNI configuration did not change the revision")
	}
	if other := revision(`cloudProviderSpec: {virtualMachine: {networks: [{name: tenant-net}, {name: other-net}]}}`); other == first {
		t.Error("another network did not change the revision")
	}
}
