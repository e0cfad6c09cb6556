package tenant

import (
	"context"
	"fmt"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

// WarnInTheWay returns an apply.Target InTheWay that records a Warning
// event ObjectInTheWay regarding the infra object in the way; action names
// what the controller was doing. Nothing when rec is nil.
func WarnInTheWay(rec events.EventRecorder, action string) func(context.Context, string, ctrlruntimeclient.Object) {
	return func(_ context.Context, kind string, obj ctrlruntimeclient.Object) {
		if rec != nil {
			rec.Eventf(obj, nil, corev1.EventTypeWarning, infrav1alpha1.ReasonObjectInTheWay, action, "%s", inTheWay(kind, obj))
		}
	}
}

// WarnInTheWayOf is WarnInTheWay for objects in a tenant cluster: the
// event regards the tenant's Namespace on the infra cluster, where an
// operator of the infra cluster looks.
func WarnInTheWayOf(rec events.EventRecorder, namespace *corev1.Namespace, action string) func(context.Context, string, ctrlruntimeclient.Object) {
	return func(_ context.Context, kind string, obj ctrlruntimeclient.Object) {
		if rec != nil {
			rec.Eventf(namespace, nil, corev1.EventTypeWarning, infrav1alpha1.ReasonObjectInTheWay, action, "%s", "In the tenant cluster: "+inTheWay(kind, obj))
		}
	}
}

// inTheWay says which object is in the way and what to do about it.
func inTheWay(kind string, obj ctrlruntimeclient.Object) string {
	name := obj.GetName()
	if obj.GetNamespace() != "" {
		name = obj.GetNamespace() + "/" + name
	}
	return EventNote(fmt.Sprintf("%s %s has the name of an object the infra-controller keeps but not its label %s=%s, so it was left alone; delete it to let the infra-controller create its own",
		kind, name, ManagedByLabel, ManagedByValue))
}

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
