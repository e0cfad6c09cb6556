// Package coreevents records the machine-controller's events through the
// core (v1) Events API. Kubermatic reconciles the user-cluster RBAC of
// machine-controller and grants events only in the core API group
// (create, patch); events.k8s.io, which controller-runtime's recorder
// writes, would be forbidden there and every event (Created, Evacuated,
// InstanceStopped, ...) lost. Core Events are the same objects: they are
// listed through events.k8s.io/v1 too.
package coreevents

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
)

// Provider gives the core API's recorder of a controller, as a
// controller-runtime manager does.
type Provider interface {
	GetEventRecorderFor(name string) record.EventRecorder
}

// For returns the events.EventRecorder of the controller name that writes
// core Events.
func For(p Provider, name string) events.EventRecorder {
	return recorder{p.GetEventRecorderFor(name)}
}

// recorder adapts a core API recorder to events.EventRecorder. The core
// API has no action and no related object; both are dropped (the notes of
// this project's events name the related object already).
type recorder struct {
	core record.EventRecorder
}

// Eventf implements events.EventRecorder.
func (r recorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	r.core.Eventf(regarding, eventtype, reason, note, args...)
}
