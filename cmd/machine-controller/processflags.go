package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
)

// processFlags are the flags every long-running sub-command (run, webhook)
// shares: where the user and infra clusters are, which Machines are ours,
// where metrics and probes are served, and the log level. They are bound
// and read in one place so both processes mean the same by them.
type processFlags struct {
	kubeconfig      string
	infraKubeconfig string
	infraNamespace  string
	name            string
	metricsAddress  string
	healthAddress   string
	debug           bool
}

// bind adds the flags to fl. The help of --infra-namespace and --name says
// what each sub-command does with them.
func (p *processFlags) bind(fl *pflag.FlagSet, infraNamespaceHelp, nameHelp string) {
	fl.StringVar(&p.kubeconfig, "kubeconfig", "", "kubeconfig of the user cluster (default: in-cluster or $KUBECONFIG)")
	fl.StringVar(&p.infraKubeconfig, "infra-kubeconfig", "", "kubeconfig file of the infra cluster (default: $KUBEVIRT_KUBECONFIG)")
	fl.StringVar(&p.infraNamespace, "infra-namespace", "", infraNamespaceHelp)
	fl.StringVar(&p.name, "name", "", nameHelp)
	fl.StringVar(&p.metricsAddress, "metrics-bind-address", ":8080", `metrics address ("0" disables)`)
	fl.StringVar(&p.healthAddress, "health-probe-bind-address", ":8085", `/healthz and /readyz address ("0" disables)`)
	fl.BoolVar(&p.debug, "debug", false, "log at debug level")
}

// clusters returns the user cluster's configuration and the content of
// --infra-kubeconfig (nil without it: the environment or each providerSpec
// then names the infra cluster).
func (p *processFlags) clusters() (*rest.Config, []byte, error) {
	cfg, err := kubeconfig.OperatorConfig(p.kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("the user cluster: %w", err)
	}
	if p.infraKubeconfig == "" {
		return cfg, nil, nil
	}
	// The operator's file: unlike the kubeconfigs of users it may run exec
	// plugins and read files (package kubeconfig).
	infraKubeconfig, err := kubeconfig.ReadOperatorFile(p.infraKubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("--infra-kubeconfig: %w", err)
	}
	return cfg, infraKubeconfig, nil
}

// logger returns the process's JSON logger writing to errOut, at debug
// level with --debug.
func (p *processFlags) logger(errOut io.Writer) *zap.Logger {
	level := zapcore.InfoLevel
	if p.debug {
		level = zapcore.DebugLevel
	}
	return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(errOut), level))
}
