package machinedeployment

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/client-go/tools/events"
)

// fakeRevision is a TemplateRevisionFunc whose answer the test sets.
type fakeRevision struct {
	revision string
	err      error
}

func (f *fakeRevision) get(context.Context, clusterv1alpha1.MachineSpec) (string, error) {
	return f.revision, f.err
}

// setRevisions lists the infra revision of every MachineSet, oldest first.
func setRevisions(t *testing.T, r *reconciler) []string {
	t.Helper()
	var out []string
	for _, ms := range listSets(t, r.client) {
		out = append(out, ms.Spec.Template.Annotations[AnnotationInfraRevision])
	}
	return out
}

// TestInfraRevisionRollsOut: a MachineSet made before revisions existed is
// stamped, not rolled; a changed revision (a tenant network's CNI
// configuration was edited) rolls the MachineDeployment like a template
// change; a revision that cannot be read changes nothing.
func TestInfraRevisionRollsOut(t *testing.T) {
	md := testDeployment(2, `{"image":"a"}`, 1, 0)
	c := newTestClient(t, md)
	r := newReconciler(c, events.NewFakeRecorder(100))
	reconcileOnce(t, r)
	settle(t, c, true)
	reconcileOnce(t, r)

	infra := &fakeRevision{revision: "r1"}
	r.templateRevision = infra.get
	for range 2 {
		reconcileOnce(t, r)
		settle(t, c, true)
	}
	if got := setRevisions(t, r); !cmp.Equal(got, []string{"r1"}) {
		t.Fatalf("after upgrading: MachineSet revisions %q, want the old MachineSet stamped [r1]", got)
	}

	infra.err = errors.New("infra cluster unreachable")
	infra.revision = ""
	for range 2 {
		reconcileOnce(t, r)
		settle(t, c, true)
	}
	if got := setRevisions(t, r); !cmp.Equal(got, []string{"r1"}) {
		t.Fatalf("with the revision unreadable: MachineSet revisions %q, want [r1]", got)
	}

	infra.err, infra.revision = nil, "r2"
	for step := 0; ; step++ {
		if step == 20 {
			t.Fatalf("rollout did not finish: revisions %q, replicas %v", setRevisions(t, r), setReplicas(t, c))
		}
		reconcileOnce(t, r)
		settle(t, c, true)
		if getDeployment(t, c).Annotations[AnnotationProgress] == ReasonNewMachineSetAvailable && len(listSets(t, c)) == 1 {
			break
		}
	}
	sets := listSets(t, c)
	if got := sets[0].Spec.Template.Annotations[AnnotationInfraRevision]; got != "r2" {
		t.Errorf("new MachineSet revision %q, want r2", got)
	}
	if got := getDeployment(t, c).Spec.Template.Annotations; got != nil {
		t.Errorf("the MachineDeployment's own template got annotations %v: the revision is in memory only", got)
	}

	// A template without infra dependencies drops the annotation.
	infra.revision = ""
	reconcileOnce(t, r)
	if got := setRevisions(t, r); len(got) != 2 || got[1] != "" {
		t.Errorf("after the dependency went: MachineSet revisions %q, want a new MachineSet without one", got)
	}
}
