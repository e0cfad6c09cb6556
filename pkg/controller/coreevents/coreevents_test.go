package coreevents

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

type fakeProvider struct{ *record.FakeRecorder }

func (f fakeProvider) GetEventRecorderFor(string) record.EventRecorder { return f.FakeRecorder }

func TestFor(t *testing.T) {
	fake := record.NewFakeRecorder(2)
	r := For(fakeProvider{fake}, "machine-controller")
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	r.Eventf(node, &corev1.Pod{}, corev1.EventTypeWarning, "Evacuated", "Evacuate", "Drained Node %s", node.Name)
	if got, want := <-fake.Events, "Warning Evacuated Drained Node n"; got != want {
		t.Errorf("event %q, want %q", got, want)
	}
}
