package webhook

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8c.io/machine-controller/sdk/providerconfig/configvar"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Provider is what the webhook needs of the cloud provider: defaults and
// validation of a MachineSpec (the KubeVirt provider in production).
type Provider interface {
	// AddDefaults returns the defaulted copy of spec; it may read the
	// infra cluster.
	AddDefaults(ctx context.Context, log *zap.SugaredLogger, spec clusterv1alpha1.MachineSpec) (clusterv1alpha1.MachineSpec, error)
	// Validate checks spec and what it references on the infra cluster; a
	// cloudprovider.TerminalError is the user's to fix.
	Validate(ctx context.Context, log *zap.SugaredLogger, spec clusterv1alpha1.MachineSpec) error
}

// DefaultInfraBudget is how long an admission request waits for the infra
// cluster before it is decided on the spec's syntax alone.
const DefaultInfraBudget = 2 * time.Second

// specChecker checks and defaults providerSpecs.
type specChecker struct {
	provider Provider
	// client resolves ConfigVar references (Secrets, ConfigMaps of the
	// user cluster); nil resolves inline values only.
	client ctrlruntimeclient.Client
	getenv func(string) string
	budget time.Duration
	log    *zap.SugaredLogger

	// silent remembers infra kubeconfigs (by SHA-256) that did not answer
	// within the budget, until when they are not asked again: with an
	// infra cluster down, only the first request of each period waits.
	mu     sync.Mutex
	silent map[[sha256.Size]byte]time.Time
}

// silentFor is how long an infra cluster that did not answer in time is
// not asked again.
const silentFor = 30 * time.Second

// verdict is the outcome of a check: refusals, each naming its field path,
// and warnings for the user.
type verdict struct {
	refusals []string
	warnings []string
}

func (v *verdict) refuse(errs field.ErrorList) {
	for _, e := range errs {
		v.refusals = append(v.refusals, e.Error())
	}
}

// check validates spec, whose field path is specPath ("spec" for a
// Machine, "spec.template.spec" for the owners). The syntax is always
// checked; what the spec references on the infra cluster only when the
// infra cluster answers within the budget. It returns the loaded settings
// too, nil when the providerSpec did not load.
func (c *specChecker) check(ctx context.Context, specPath string, spec clusterv1alpha1.MachineSpec) (verdict, *config.Settings) {
	var v verdict
	if spec.ProviderSpec.Value == nil || len(spec.ProviderSpec.Value.Raw) == 0 {
		v.refuse(field.ErrorList{field.Required(field.NewPath(specPath).Child("providerSpec", "value"), "")})
		return v, nil
	}
	settings, warnings, err := config.Load(ctx, spec.ProviderSpec.Value.Raw, c.resolver(ctx), config.Options{Getenv: c.getenv})
	for _, w := range warnings {
		v.warnings = append(v.warnings, rebase(specPath, w))
	}
	var invalid *config.InvalidError
	switch {
	case errors.As(err, &invalid):
		for _, e := range invalid.Errs {
			v.refusals = append(v.refusals, rebase(specPath, e.Error()))
		}
		return v, nil
	case err != nil:
		c.log.Infow("Admitting a providerSpec whose references could not be resolved", "error", err)
		v.warnings = append(v.warnings, "providerSpec references not checked: "+err.Error())
		return v, nil
	}
	answered, err := c.withinBudget(ctx, settings.Kubeconfig, func(ctx context.Context) error {
		return c.provider.Validate(ctx, c.log, spec)
	})
	if terminal, ok := cloudprovider.IsTerminal(err); ok && answered {
		for _, msg := range strings.Split(terminal.Message, "; ") {
			v.refusals = append(v.refusals, rebase(specPath, msg))
		}
		return v, settings
	}
	if err != nil {
		infraUnchecked.WithLabelValues(uncheckedReason(err)).Inc()
		c.log.Infow("Admitting on the providerSpec's syntax alone: the infra cluster did not answer", "error", err, "budget", c.budget)
		v.warnings = append(v.warnings, "infra cluster not checked ("+err.Error()+"); the Machine reports problems there later")
	}
	return v, settings
}

// defaults returns spec with the provider's defaults, or spec unchanged
// when the infra cluster does not answer within the budget or the spec is
// invalid (the validating webhook refuses it).
func (c *specChecker) defaults(ctx context.Context, spec clusterv1alpha1.MachineSpec) clusterv1alpha1.MachineSpec {
	if spec.ProviderSpec.Value == nil || len(spec.ProviderSpec.Value.Raw) == 0 {
		return spec
	}
	settings, _, err := config.Load(ctx, spec.ProviderSpec.Value.Raw, c.resolver(ctx), config.Options{Getenv: c.getenv})
	if err != nil {
		return spec
	}
	var out clusterv1alpha1.MachineSpec
	_, err = c.withinBudget(ctx, settings.Kubeconfig, func(ctx context.Context) error {
		var err error
		out, err = c.provider.AddDefaults(ctx, c.log, spec)
		return err
	})
	if err != nil {
		c.log.Infow("Leaving a providerSpec without defaults", "error", err)
		return spec
	}
	return out
}

// resolver resolves ConfigVar references through the user cluster, or
// inline values only without a client.
func (c *specChecker) resolver(ctx context.Context) config.Resolver {
	if c.client == nil {
		return nil
	}
	return configvar.NewResolver(ctx, c.client)
}

// errSilent is returned for an infra cluster that recently did not answer.
var errSilent = errors.New("the infra cluster did not answer recently")

// withinBudget runs fn with a context that ends after the budget and
// returns whether fn returned within it and its error (the context's
// error when it did not). fn keeps running in the background until it
// sees its context end, so a hanging infra cluster never holds a request.
// An infra cluster (kubeconfig) that did not answer in time is not asked
// again for silentFor.
func (c *specChecker) withinBudget(ctx context.Context, kubeconfig []byte, fn func(context.Context) error) (answered bool, err error) {
	key := sha256.Sum256(kubeconfig)
	c.mu.Lock()
	until, silent := c.silent[key]
	c.mu.Unlock()
	if silent && time.Now().Before(until) {
		return false, errSilent
	}
	ctx, cancel := context.WithTimeout(ctx, c.budget)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	select {
	case err = <-done:
		answered = true
	case <-ctx.Done():
		err = fmt.Errorf("no answer within %s: %w", c.budget, ctx.Err())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		c.pause(key)
		return false, err
	}
	return answered, err
}

// pause keeps the infra cluster of key from being asked for silentFor,
// and forgets pauses that are over.
func (c *specChecker) pause(key [sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.silent == nil {
		c.silent = map[[sha256.Size]byte]time.Time{}
	}
	for k, until := range c.silent {
		if now.After(until) {
			delete(c.silent, k)
		}
	}
	c.silent[key] = now.Add(silentFor)
}

// rebase moves a message about spec.providerSpec... to where the spec
// lives in the admitted object (e.g. spec.template.spec.providerSpec...).
func rebase(specPath, msg string) string {
	if specPath == "spec" {
		return msg
	}
	return strings.ReplaceAll(msg, "spec.providerSpec.", specPath+".providerSpec.")
}
