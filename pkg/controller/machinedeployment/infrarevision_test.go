package machinedeployment

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
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
// change; a revision that cannot be read changes nothing, even when an
// older MachineSet of the same template is kept as history.
func TestInfraRevisionRollsOut(t *testing.T) {
	md := testDeployment(2, `{"image":"a"}`, 1, 0)
	md.Spec.RevisionHistoryLimit = ptr.To[int32](5)
	c := newTestClient(t, md)
	r := newReconciler(c, events.NewFakeRecorder(100))
	reconcileOnce(t, r)
	settle(t, c, true)
	reconcileOnce(t, r)

	infra := &fakeRevision{revision: "r1"}
	r.templateRevision = infra.get
	settleFor := func(steps int) {
		t.Helper()
		for range steps {
			reconcileOnce(t, r)
			settle(t, c, true)
		}
	}
	settleFor(2)
	if got := setRevisions(t, r); !cmp.Equal(got, []string{"r1"}) {
		t.Fatalf("after upgrading: MachineSet revisions %q, want the old MachineSet stamped [r1]", got)
	}

	infra.err, infra.revision = errors.New("infra cluster unreachable"), ""
	settleFor(2)
	if got := setRevisions(t, r); !cmp.Equal(got, []string{"r1"}) {
		t.Fatalf("with the revision unreadable: MachineSet revisions %q, want [r1]", got)
	}

	infra.err, infra.revision = nil, "r2"
	for step := 0; ; step++ {
		if step == 20 {
			t.Fatalf("rollout did not finish: revisions %q, replicas %v", setRevisions(t, r), setReplicas(t, c))
		}
		settleFor(1)
		if getDeployment(t, c).Annotations[AnnotationProgress] == ReasonNewMachineSetAvailable {
			break
		}
	}
	if got, replicas := setRevisions(t, r), setReplicas(t, c); !cmp.Equal(got, []string{"r1", "r2"}) || !cmp.Equal(replicas, []int32{0, 2}) {
		t.Fatalf("after the rollout: revisions %q, replicas %v; want [r1 r2], [0 2]", got, replicas)
	}
	if got := getDeployment(t, c).Spec.Template.Annotations; got != nil {
		t.Errorf("the MachineDeployment's own template got annotations %v: the revision is in memory only", got)
	}

	// Unreadable again: the current MachineSet (r2) is kept, not the older
	// one of the same template that history keeps.
	infra.err, infra.revision = errors.New("infra cluster unreachable"), ""
	settleFor(3)
	if got, replicas := setRevisions(t, r), setReplicas(t, c); !cmp.Equal(got, []string{"r1", "r2"}) || !cmp.Equal(replicas, []int32{0, 2}) {
		t.Errorf("with the revision unreadable after the rollout: revisions %q, replicas %v; want [r1 r2], [0 2]", got, replicas)
	}

	// A new template without infra dependencies (its networks removed)
	// has no annotation.
	infra.err = nil
	md = getDeployment(t, c)
	md.Spec.Template = *template(`{"image":"b"}`, map[string]string{"pool": "a"})
	if err := c.Update(t.Context(), md); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r)
	if got := setRevisions(t, r); len(got) != 3 || got[2] != "" {
		t.Errorf("after the dependency went: MachineSet revisions %q, want a new MachineSet without one", got)
	}
}
