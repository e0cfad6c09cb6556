package machine

// Reasons of the events the controller records on Machines (and on the
// ConfigMap of infra node labels). A terminal error's event carries the
// Machine's status.errorReason instead (common.MachineStatusError).
const (
	// ReasonCreated: the instance (VirtualMachine) was created; the
	// message names it. Kubermatic's controller records it too.
	ReasonCreated = "Created"
	// ReasonInstanceWaiting (Warning): the infrastructure says why the
	// instance does not run yet, e.g. kube-scheduler places its
	// virt-launcher pod on no infra node; the message carries its reason
	// and words. Once per Machine and message.
	ReasonInstanceWaiting = "InstanceWaiting"
	// ReasonReconcilingError (Warning): a reconcile failed and is
	// retried; the message is the error.
	ReasonReconcilingError = "ReconcilingError"
	// ReasonJoinTimeout (Warning): no Node joined within the join timeout;
	// the Machine is deleted so that its MachineSet replaces it.
	ReasonJoinTimeout = "JoinTimeout"
	// ReasonInstanceStopped (Warning): the instance stayed stopped or
	// failed beyond its grace period; the Machine is deleted so that its
	// MachineSet replaces it, or, without one, the warning repeats.
	ReasonInstanceStopped = "InstanceStopped"
	// ReasonDrainFailed (Warning): draining the Node before deletion
	// failed and is retried; the message is the error.
	ReasonDrainFailed = "DrainFailed"
	// ReasonInvalidLabelKeys (Warning, on the ConfigMap): some label keys
	// of the infra node labels are invalid; the valid ones are copied.
	ReasonInvalidLabelKeys = "InvalidLabelKeys"
)

// Reasons of the events an evacuation records on the Machine.
const (
	// ReasonEvacuated: the guest Node was drained and the VMI deleted, so
	// that KubeVirt restarts it on another infra node (restart).
	ReasonEvacuated = "Evacuated"
	// ReasonMigrating: a live migration of the VMI was requested, or one
	// KubeVirt started is under way (liveMigrate); once per migration.
	ReasonMigrating = "Migrating"
	// ReasonEvacuationReplaced: the guest Node was drained and the Machine
	// deleted, so that its MachineSet replaces it (replace).
	ReasonEvacuationReplaced = "EvacuationReplaced"
	// ReasonEvacuationFallback (Warning): the policy could not be
	// followed, e.g. a live migration failed; the message names the way
	// taken instead and why.
	ReasonEvacuationFallback = "EvacuationFallback"
)
