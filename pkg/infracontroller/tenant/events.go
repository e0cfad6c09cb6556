package tenant

import (
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

// WarnRefused records a Warning event InvalidConfig on cm, the ConfigMap
// whose entries in refused were skipped, never written; action names what
// the controller was doing. Nothing when rec is nil.
func WarnRefused(rec events.EventRecorder, cm *corev1.ConfigMap, action string, refused error) {
	if rec == nil || refused == nil {
		return
	}
	rec.Eventf(cm, nil, corev1.EventTypeWarning, infrav1alpha1.ReasonInvalidConfig, action,
		"%s", EventNote(refused.Error()+"; the valid ones are applied"))
}

// noteLimit is the most bytes the API server accepts in an event's note.
const noteLimit = 1024

// EventNote cuts msg to the API server's limit of an event's note, on a
// character boundary.
func EventNote(msg string) string {
	if len(msg) <= noteLimit {
		return msg
	}
	const more = " ..."
	cut := noteLimit - len(more)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + more
}
