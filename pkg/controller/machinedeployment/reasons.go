package machinedeployment

import "k8c.io/machine-controller/sdk/apis/cluster/common"

// Progress reasons.
const (
	// ReasonNewMachineSetCreated: the rollout created its MachineSet.
	ReasonNewMachineSetCreated = "NewMachineSetCreated"
	// ReasonMachineSetUpdated: the rollout is under way and progressing.
	ReasonMachineSetUpdated = "MachineSetUpdated"
	// ReasonNewMachineSetAvailable: the rollout is complete.
	ReasonNewMachineSetAvailable = "NewMachineSetAvailable"
	// ReasonProgressDeadlineExceeded: the rollout made no progress for
	// progressDeadlineSeconds.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonPaused: the MachineDeployment is paused; no deadline applies.
	ReasonPaused = common.PausedDeployReason
)

// ReasonInvalidConfiguration is the error reason of a MachineDeployment
// whose spec the controller refuses, and the reason of the Warning event
// recorded when the error appears or its message changes. Machines and
// MachineSets use the same reason for an invalid spec.
const ReasonInvalidConfiguration = "InvalidConfiguration"

// Reasons of the events about the MachineSets of a MachineDeployment, the
// ones a Kubernetes Deployment records for its ReplicaSets.
const (
	// ReasonSuccessfulCreate: the rollout created a MachineSet.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	// ReasonFailedCreate: the API server refused a new MachineSet.
	ReasonFailedCreate = "FailedCreate"
	// ReasonScalingMachineSet: a MachineSet was scaled up or down.
	ReasonScalingMachineSet = "ScalingMachineSet"
)
