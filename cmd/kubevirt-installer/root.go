package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/readiness"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/version"
)

// globalOptions are the options of every command and the injected
// dependencies.
type globalOptions struct {
	kubeconfig   string
	context      string
	timeout      time.Duration
	pollInterval time.Duration
	debug        bool

	out    io.Writer
	errOut io.Writer
	// clock paces waits; nil is the real clock.
	clock clock.WithTicker
	// wrapTransport, if set, wraps the transport of every cluster client
	// (tests count requests with it).
	wrapTransport func(http.RoundTripper) http.RoundTripper
}

// newRootCommand returns the kubevirt-installer command. Output goes to out,
// Helm's debug log (--debug) to errOut; clk paces waits (nil: real clock).
func newRootCommand(out, errOut io.Writer, clk clock.WithTicker) *cobra.Command {
	return newRoot(&globalOptions{out: out, errOut: errOut, clock: clk})
}

// newRoot returns the kubevirt-installer command with the dependencies of g.
func newRoot(g *globalOptions) *cobra.Command {
	out, errOut := g.out, g.errOut
	cmd := &cobra.Command{
		Use:   "kubevirt-installer",
		Short: "Install KubeVirt, CDI, Multus and the CNI plugins on an infra cluster",
		Long: `kubevirt-installer installs a pinned KubeVirt stack (CNI reference plugins,
Multus, KubeVirt, CDI) with the Helm v3 SDK, in dependency order, waiting for
each component to be ready. Running it again changes nothing.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Get().String(),
	}
	cmd.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	f := cmd.PersistentFlags()
	f.StringVar(&g.kubeconfig, "kubeconfig", "", "kubeconfig of the infra cluster (default: $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&g.context, "context", "", "kubeconfig context to use")
	f.DurationVar(&g.timeout, "timeout", readiness.DefaultTimeout, "how long to wait for each component (and each deletion)")
	f.DurationVar(&g.pollInterval, "poll-interval", readiness.DefaultInterval, "how often to check progress while waiting")
	f.BoolVar(&g.debug, "debug", false, "write Helm's debug log to stderr")
	_ = f.MarkHidden("poll-interval")
	cmd.AddCommand(
		newInstallCommand(g, false),
		newInstallCommand(g, true),
		newUninstallCommand(g),
		newStatusCommand(g),
		newPreflightCommand(g),
		newTemplateCommand(g),
		newImagesCommand(g),
		newStorageClassCommand(g),
		newBundleCommand(g),
		newMirrorImagesCommand(g),
	)
	return cmd
}

// restConfig loads the cluster's client configuration.
func (g *globalOptions) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = g.kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: g.context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("failed to load the kubeconfig: %w", err)
	}
	if g.wrapTransport != nil {
		cfg.Wrap(g.wrapTransport)
	}
	return cfg, nil
}

// validate checks the global flags: every wait needs a positive bound and
// interval.
func (g *globalOptions) validate() error {
	var errs []error
	if g.timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: must be positive", g.timeout))
	}
	if g.pollInterval <= 0 {
		errs = append(errs, fmt.Errorf("--poll-interval %s: must be positive", g.pollInterval))
	}
	return errors.Join(errs...)
}

// poller paces and bounds waits as the flags say.
func (g *globalOptions) poller() readiness.Poller {
	return readiness.Poller{Clock: g.clock, Interval: g.pollInterval, Timeout: g.timeout}
}

// helmLog is where Helm's debug log goes.
func (g *globalOptions) helmLog() io.Writer {
	if g.debug {
		return g.errOut
	}
	return nil
}
