package cloudprovider

import (
	"context"

	"go.uber.org/zap"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Provider creates, inspects and deletes the cloud instance of a Machine.
type Provider interface {
	// AddDefaults fills in defaults of the MachineSpec (labels, annotations)
	// and returns the defaulted copy. It may read the infra cluster. Errors
	// are TerminalError when the spec must be fixed by the user.
	AddDefaults(ctx context.Context, log *zap.SugaredLogger, spec clusterv1alpha1.MachineSpec) (clusterv1alpha1.MachineSpec, error)

	// Validate checks the MachineSpec, including that what it references
	// exists on the infra cluster. A TerminalError names the field path and
	// what is allowed; any other error is transient.
	Validate(ctx context.Context, log *zap.SugaredLogger, spec clusterv1alpha1.MachineSpec) error

	// Get returns the instance of the Machine, ErrInstanceNotFound when there
	// is none, a TerminalError when the spec is invalid, or a transient error.
	Get(ctx context.Context, log *zap.SugaredLogger, machine *clusterv1alpha1.Machine, data *ProviderData) (Instance, error)

	// Create creates the instance with the given user data. It is idempotent:
	// calling it again after a partial failure completes the instance and
	// creates nothing twice.
	Create(ctx context.Context, log *zap.SugaredLogger, machine *clusterv1alpha1.Machine, data *ProviderData, userdata string) (Instance, error)

	// Cleanup deletes the instance and everything created for it. It returns
	// true once all of it is gone; callers call it again until then.
	Cleanup(ctx context.Context, log *zap.SugaredLogger, machine *clusterv1alpha1.Machine, data *ProviderData) (bool, error)

	// MachineMetricsLabels returns labels describing the Machine for
	// metrics. It must not call any API.
	MachineMetricsLabels(machine *clusterv1alpha1.Machine) (map[string]string, error)
}

// ProviderData is what the controller lends a provider call.
type ProviderData struct {
	// Client reads the user cluster (ConfigVar references, MachineSets).
	Client ctrlruntimeclient.Client
	// Update applies modifiers to the Machine and persists it.
	Update MachineUpdater
}

// MachineUpdater persists changes to a Machine.
type MachineUpdater func(machine *clusterv1alpha1.Machine, modifiers ...func(*clusterv1alpha1.Machine)) error
