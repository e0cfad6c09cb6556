package cloudprovider

import (
	corev1 "k8s.io/api/core/v1"
)

// InstanceStatus is the lifecycle state of a cloud instance.
type InstanceStatus string

const (
	// StatusCreating means the instance exists but is not running yet.
	StatusCreating InstanceStatus = "creating"
	// StatusRunning means the instance runs.
	StatusRunning InstanceStatus = "running"
	// StatusDeleting means the instance is being deleted.
	StatusDeleting InstanceStatus = "deleting"
	// StatusDeleted means the instance is gone.
	StatusDeleted InstanceStatus = "deleted"
	// StatusStopped means the instance exists but does not run and is not
	// starting: it ended, or it reports a failure that keeps it from
	// running. It may still come back by itself (a restart policy).
	StatusStopped InstanceStatus = "stopped"
	// StatusUnknown means the state cannot be told.
	StatusUnknown InstanceStatus = "unknown"
)

// Instance is the provider's view of a Machine's cloud instance.
type Instance interface {
	// Name of the instance on the cloud.
	Name() string
	// ID is the cloud's unique id of the instance.
	ID() string
	// ProviderID is the value a Node of this instance carries in
	// spec.providerID.
	ProviderID() string
	// Addresses maps every address of the instance to its type.
	Addresses() map[string]corev1.NodeAddressType
	// Status is the lifecycle state.
	Status() InstanceStatus
}

// Waiting is implemented by an Instance that can say why it does not run
// yet in the words of the infrastructure, such as a scheduler that places
// it nowhere.
type Waiting interface {
	// WaitingFor returns the infrastructure's reason and message, or two
	// empty strings while it names none.
	WaitingFor() (reason, message string)
}
