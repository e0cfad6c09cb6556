package tenant

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

// TestEventNote: a Warning event's note fits the API server's limit and is
// cut on a character boundary.
func TestEventNote(t *testing.T) {
	for _, msg := range []string{"short", strings.Repeat("a", noteLimit), strings.Repeat("ä", noteLimit), strings.Repeat("x", 3*noteLimit)} {
		got := EventNote(msg)
		switch {
		case len(got) > noteLimit:
			t.Errorf("note of %d bytes", len(got))
		case !utf8.ValidString(got):
			t.Errorf("note cut inside a character: %q", got[len(got)-8:])
		case len(msg) <= noteLimit && got != msg:
			t.Errorf("a short note was changed to %q", got)
		}
	}
}

// recorded is one event of capture.
type recorded struct {
	regarding          string
	kind, reason, note string
	action, eventType  string
}

// capture is an events.EventRecorder that keeps what it is told.
type capture struct{ events []recorded }

func (c *capture) Eventf(regarding, _ runtime.Object, eventType, reason, action, note string, args ...any) {
	obj, _ := regarding.(ctrlruntimeclient.Object)
	c.events = append(c.events, recorded{
		regarding: obj.GetNamespace() + "/" + obj.GetName(), kind: fmt.Sprintf("%T", regarding),
		reason: reason, note: fmt.Sprintf(note, args...), action: action, eventType: eventType,
	})
}

// TestWarnInTheWay: an infra object in the way gets the Warning event
// itself; one of a tenant cluster is told on the tenant Namespace. Both
// name the object and the label it lacks.
func TestWarnInTheWay(t *testing.T) {
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: "kubevirt-csi"}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster-a"}}
	rec := &capture{}
	WarnInTheWay(rec, "Act")(t.Context(), "ConfigMap", foreign)
	WarnInTheWayOf(rec, ns, "ActInTenant")(t.Context(), "DaemonSet", &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "node"}})
	WarnInTheWay(nil, "Act")(t.Context(), "ConfigMap", foreign)
	if len(rec.events) != 2 {
		t.Fatalf("recorded %+v, want two events", rec.events)
	}
	for i, want := range []recorded{
		{regarding: "cluster-a/kubevirt-csi", kind: "*v1.ConfigMap", action: "Act", note: "ConfigMap cluster-a/kubevirt-csi has the name"},
		{regarding: "/cluster-a", kind: "*v1.Namespace", action: "ActInTenant", note: "In the tenant cluster: DaemonSet kube-system/node has the name"},
	} {
		got := rec.events[i]
		if got.regarding != want.regarding || got.kind != want.kind || got.action != want.action || got.eventType != corev1.EventTypeWarning ||
			got.reason != infrav1alpha1.ReasonObjectInTheWay || !strings.HasPrefix(got.note, want.note) || !strings.Contains(got.note, ManagedByLabel+"="+ManagedByValue) {
			t.Errorf("event %d = %+v, want a Warning %s regarding %s %s, action %s, note starting %q and naming the label", i, got, infrav1alpha1.ReasonObjectInTheWay, want.kind, want.regarding, want.action, want.note)
		}
	}
}
