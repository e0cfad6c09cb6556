package main

import (
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/filelimit"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
)

// Kubermatic (KKP) deploys machine-controller with Go-style flags and no
// sub-command (`machine-controller -kubeconfig … -node-csr-approver`) and
// its webhook as a second binary (`webhook -worker-cluster-kubeconfig …`),
// and lets an operator change only the image. The parsers here take every
// flag that Kubermatic's machine-controller v1.60 to v1.66 (KKP 2.26 to
// 2.31) defines, with its meaning where this controller has one, else as a
// documented no-op that logs once; any other flag fails at start.

// kkpCommonFlags are the flags both of Kubermatic's binaries define.
type kkpCommonFlags struct {
	kubeconfig, master string
	caBundle           string
	logDebug           bool
	logFormat          string
	// noops are the set flags that change nothing here, with the reason.
	noops []string
}

// bindCommon registers the flags both binaries take, and the node flags
// (operating-system-manager's business now) as no-ops.
func (c *kkpCommonFlags) bindCommon(fs *flag.FlagSet) {
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig file of the user cluster (default: in-cluster)")
	fs.StringVar(&c.master, "master", "", "API server address that overrides the kubeconfig's")
	fs.StringVar(&c.caBundle, "ca-bundle", "", "PEM file of the CA certificates trusted instead of the host's: the infra API server, image sources and proxies")
	fs.BoolVar(&c.logDebug, "log-debug", false, "log at debug level")
	fs.StringVar(&c.logFormat, "log-format", "json", "log format: json or console")
	c.noop(fs, "node-external-cloud-provider", true, "operating-system-manager configures the kubelet's cloud provider")
	c.noop(fs, "node-kubelet-feature-gates", false, "operating-system-manager configures the kubelet's feature gates")
	c.noop(fs, "use-external-bootstrap", true, "bootstrap is always external (operating-system-manager)")
}

// noop registers a flag that is accepted and changes nothing; once set, it
// is listed in c.noops with why.
func (c *kkpCommonFlags) noop(fs *flag.FlagSet, name string, isBool bool, why string) {
	usage := "no-op here: " + why
	set := func(string) error {
		c.noops = append(c.noops, "-"+name+": "+why)
		return nil
	}
	if isBool {
		fs.BoolFunc(name, usage, set)
		return
	}
	fs.Func(name, usage, set)
}

// validate checks what can be checked before anything starts.
func (c *kkpCommonFlags) validate() error {
	var errs []error
	if !slices.Contains([]string{"json", "console"}, c.logFormat) {
		errs = append(errs, fmt.Errorf("-log-format %q: want json or console", c.logFormat))
	}
	if c.caBundle != "" {
		if err := checkCABundle(c.caBundle); err != nil {
			errs = append(errs, fmt.Errorf("-ca-bundle: %w", err))
		}
	}
	return errors.Join(errs...)
}

// caBundleLimit bounds the -ca-bundle file read: a bundle of every public
// CA is about 250 KiB.
const caBundleLimit = 8 << 20

// checkCABundle checks that path holds at least one PEM certificate.
func checkCABundle(path string) error {
	data, err := filelimit.ReadFile(path, caBundleLimit)
	if err != nil {
		return err
	}
	if !x509.NewCertPool().AppendCertsFromPEM(data) {
		return fmt.Errorf("%s holds no PEM certificate", path)
	}
	return nil
}

// useCABundle makes the bundle the process's trust roots for every TLS
// connection that brings no CA of its own (a kubeconfig without
// certificate-authority-data, HTTPS proxies, image sources), in place of
// the host's, as Go reads SSL_CERT_FILE when it first needs them. It must
// run before the first TLS connection.
func (c *kkpCommonFlags) useCABundle() error {
	if c.caBundle == "" {
		return nil
	}
	if err := os.Setenv("SSL_CERT_FILE", c.caBundle); err != nil {
		return fmt.Errorf("failed to use -ca-bundle: %w", err)
	}
	return os.Unsetenv("SSL_CERT_DIR")
}

// logger returns the process's logger as -log-debug and -log-format say.
func (c *kkpCommonFlags) logger(errOut io.Writer) *zap.Logger {
	level := zapcore.InfoLevel
	if c.logDebug {
		level = zapcore.DebugLevel
	}
	encoder := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	if c.logFormat == "console" {
		encoder = zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	}
	return zap.New(zapcore.NewCore(encoder, zapcore.AddSync(errOut), level))
}

// logNoops logs once each set flag that changes nothing.
func (c *kkpCommonFlags) logNoops(log *zap.Logger) {
	for _, n := range c.noops {
		log.Info("Flag accepted for compatibility with Kubermatic's machine-controller; it changes nothing here", zap.String("flag", n))
	}
}

// parseKKP parses args into fs; errors name the flag and say what to do.
// Usage goes to errOut only for -help.
func parseKKP(fs *flag.FlagSet, args []string, errOut io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(errOut)
		fs.PrintDefaults()
		return err
	case err != nil:
		return fmt.Errorf("%s: %w (these are the flags of Kubermatic's %s; see -help)", fs.Name(), err, fs.Name())
	case fs.NArg() > 0:
		return fmt.Errorf("%s: unexpected argument %q (Kubermatic's command line takes flags only)", fs.Name(), fs.Arg(0))
	}
	return nil
}

// durationFlag parses upstream's string durations ("" disables).
func durationFlag(name, value string) (time.Duration, error) {
	if strings.TrimSpace(value) == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(value)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("-%s %q: want a duration of 0 or more, e.g. 25m", name, value)
	}
	return d, nil
}

// userConfig is the user cluster's configuration: path, or -kubeconfig
// when path is empty (the webhook's -worker-cluster-kubeconfig wins over
// it), with -master overriding the server; else in-cluster.
func (c *kkpCommonFlags) userConfig(path string) (*rest.Config, error) {
	path = cmp.Or(path, c.kubeconfig)
	if c.master == "" {
		return kubeconfig.OperatorConfig(path)
	}
	cfg, err := clientcmd.BuildConfigFromFlags(c.master, path)
	if err != nil {
		return nil, fmt.Errorf("failed to load the user cluster's configuration: %w", err)
	}
	return cfg, nil
}

// runKKPController runs the controller from Kubermatic's command line.
func runKKPController(ctx context.Context, args []string, getenv func(string) string, errOut io.Writer) error {
	opts, common, err := kkpControllerOptions(args, getenv, errOut)
	return startKKP(common, err, func() error {
		common.logNoops(opts.Log)
		return opts.Run(ctx)
	})
}

// runKKPWebhook runs the webhook from Kubermatic's command line.
func runKKPWebhook(ctx context.Context, args []string, getenv func(string) string, errOut io.Writer) error {
	opts, common, err := kkpWebhookOptions(args, getenv, errOut)
	return startKKP(common, err, func() error {
		common.logNoops(opts.Log)
		return opts.Run(ctx)
	})
}

// startKKP runs a process whose command line parsed (parseErr nil) once
// its -ca-bundle is in use.
func startKKP(common *kkpCommonFlags, parseErr error, run func() error) error {
	if parseErr != nil {
		return usageError(parseErr)
	}
	if err := common.useCABundle(); err != nil {
		return err
	}
	return run()
}

// usageError marks err as a command line that does not parse, but for a
// request of help, which is no error.
func usageError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return fmt.Errorf("%w: %w", errUsage, err)
}
