package kubevirt

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8c.io/machine-controller/sdk/providerconfig/configvar"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Options configure a Provider.
type Options struct {
	// Clients caches the infra clients; share one per process. Required.
	Clients *infra.Clients
	// Namespace is the infra namespace when the spec names none; "" falls
	// back to the kubeconfig's current-context namespace, then "default"
	// (see infra.ResolveNamespace).
	Namespace string
	// Client reads the cluster machine-controller runs in. It resolves
	// ConfigVar references (Secrets, ConfigMaps) in AddDefaults and
	// Validate, and in the other calls when ProviderData has no client.
	// Without any client only inline values resolve.
	Client ctrlruntimeclient.Client
	// Getenv reads the controller's environment (KUBEVIRT_KUBECONFIG,
	// CLUSTER_ID, PROJECT_ID); os.Getenv when nil.
	Getenv func(string) string
}

// Provider is the KubeVirt cloud provider. It is safe for concurrent use.
type Provider struct {
	opts Options
	// specs remembers parsed providerSpec values: Get parses the Machine's
	// on every reconcile.
	specs *config.SpecCache
}

// specCacheSize bounds the parsed providerSpec values a Provider remembers:
// one per MachineSet (template revision) is enough.
const specCacheSize = 256

var _ cloudprovider.Provider = &Provider{}

// errNoClients is returned by every call of a Provider built without
// Options.Clients.
var errNoClients = errors.New("kubevirt provider has no infra clients")

// New returns a Provider.
func New(opts Options) *Provider {
	return &Provider{opts: opts, specs: config.NewSpecCache(specCacheSize)}
}

// target is what a call works on: the resolved settings and the infra
// client of their kubeconfig and namespace.
type target struct {
	settings *config.Settings
	infra    *infra.Client
}

// prepare loads the spec and returns its infra client. userClient, when
// non-nil, resolves ConfigVar references instead of Options.Client.
// Invalid specs and unusable kubeconfigs give a TerminalError.
func (p *Provider) prepare(ctx context.Context, spec clusterv1alpha1.MachineSpec, userClient ctrlruntimeclient.Client) (*target, error) {
	if p.opts.Clients == nil {
		return nil, errNoClients
	}
	settings, err := p.load(ctx, spec, userClient)
	if err != nil {
		return nil, err
	}
	return p.targetFor(ctx, settings)
}

// targetFor returns the infra client of resolved settings.
func (p *Provider) targetFor(ctx context.Context, settings *config.Settings) (*target, error) {
	if p.opts.Clients == nil {
		return nil, errNoClients
	}
	client, err := p.opts.Clients.Get(ctx, settings.Kubeconfig, cmp.Or(settings.Namespace, p.opts.Namespace))
	if errors.Is(err, kubeconfig.ErrInvalid) {
		return nil, cloudprovider.NewInvalidConfiguration("spec.providerSpec.value.cloudProviderSpec.auth.kubeconfig: %v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get the infra client: %w", err)
	}
	return &target{settings: settings, infra: client}, nil
}

// load parses and resolves providerSpec.value.
func (p *Provider) load(ctx context.Context, spec clusterv1alpha1.MachineSpec, userClient ctrlruntimeclient.Client) (*config.Settings, error) {
	if spec.ProviderSpec.Value == nil || len(spec.ProviderSpec.Value.Raw) == 0 {
		return nil, cloudprovider.NewInvalidConfiguration("spec.providerSpec.value: Required value")
	}
	if userClient == nil {
		userClient = p.opts.Client
	}
	var resolver config.Resolver
	if userClient != nil {
		resolver = configvar.NewResolver(ctx, userClient)
	}
	settings, _, err := p.specs.Load(ctx, spec.ProviderSpec.Value.Raw, resolver, config.Options{Getenv: p.opts.Getenv})
	if err != nil {
		return nil, configError(err)
	}
	return settings, nil
}

// configError maps a config error: invalid specs are terminal, anything
// else (e.g. a referenced Secret that cannot be read now) is transient.
func configError(err error) error {
	if config.IsInvalid(err) {
		return cloudprovider.NewInvalidConfiguration("%s", err.Error())
	}
	return fmt.Errorf("failed to load the provider spec: %w", err)
}

// userClientOf returns the user-cluster client of a call, or nil.
func userClientOf(data *cloudprovider.ProviderData) ctrlruntimeclient.Client {
	if data == nil {
		return nil
	}
	return data.Client
}

// logWarnings logs the spec's warnings (converted or ignored input).
func logWarnings(log *zap.SugaredLogger, settings *config.Settings) {
	if log == nil {
		return
	}
	for _, w := range settings.Warnings {
		log.Warnw("KubeVirt provider spec", "warning", w)
	}
}
