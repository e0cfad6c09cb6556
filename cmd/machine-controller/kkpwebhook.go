package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/Masterminds/semver/v3"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/webhook"
)

// kkpWebhookFlags are the flags of Kubermatic's webhook binary.
type kkpWebhookFlags struct {
	kkpCommonFlags
	listenAddress      string
	certPath, keyPath  string
	namespace          string
	workerKubeconfig   string
	versionConstraints string
}

// newKKPWebhookFlags registers the flags on a new flag set.
func newKKPWebhookFlags() (*kkpWebhookFlags, *flag.FlagSet) {
	f := &kkpWebhookFlags{}
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	f.bindCommon(fs)
	fs.StringVar(&f.listenAddress, "listen-address", ":9876", "address the admission webhooks and /healthz are served at (HTTPS)")
	fs.StringVar(&f.certPath, "tls-cert-path", "/tmp/cert/tls.crt", "serving certificate, reloaded on change")
	fs.StringVar(&f.keyPath, "tls-key-path", "/tmp/cert/tls.key", "key of -tls-cert-path")
	fs.StringVar(&f.namespace, "namespace", "kubermatic", "namespace the webhook runs in (the cluster's namespace on the seed); the infra namespace of specs that name none, without POD_NAMESPACE")
	fs.StringVar(&f.workerKubeconfig, "worker-cluster-kubeconfig", "", "kubeconfig file of the user cluster, where Machines and MachineDeployments are (default: -kubeconfig, else in-cluster)")
	fs.StringVar(&f.versionConstraints, "kubernetes-version-constraints", ">=0.0.0", "semantic version constraint every Machine's kubelet version must meet")
	return f, fs
}

// kkpWebhookOptions parses Kubermatic's command line of the webhook into
// the options of the webhook sub-command.
func kkpWebhookOptions(args []string, getenv func(string) string, errOut io.Writer) (webhook.Options, *kkpCommonFlags, error) {
	f, fs := newKKPWebhookFlags()
	if err := parseKKP(fs, args, errOut); err != nil {
		return webhook.Options{}, nil, err
	}
	errs := []error{f.validate()}
	host, port, err := splitListenAddress(f.listenAddress)
	errs = append(errs, err)
	constraints, err := semver.NewConstraint(f.versionConstraints)
	if err != nil {
		errs = append(errs, fmt.Errorf("-kubernetes-version-constraints %q: %w", f.versionConstraints, err))
	}
	if err := errors.Join(errs...); err != nil {
		return webhook.Options{}, nil, err
	}
	cfg, err := f.userConfig(f.workerKubeconfig)
	if err != nil {
		return webhook.Options{}, nil, err
	}
	namespace := getenv(envPodNamespace)
	if namespace == "" && isSet(fs, "namespace") {
		namespace = f.namespace
	}
	return webhook.Options{
		UserConfig:      cfg,
		InfraNamespace:  namespace,
		Host:            host,
		Port:            port,
		CertFile:        f.certPath,
		KeyFile:         f.keyPath,
		KubeletVersions: constraints,
		MetricsAddress:  "0",
		HealthAddress:   "0",
		Log:             f.logger(errOut),
		Getenv:          getenv,
	}, &f.kkpCommonFlags, nil
}

// splitListenAddress splits host:port; the port must be a number.
func splitListenAddress(address string) (string, int, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, fmt.Errorf("-listen-address %q: want host:port, e.g. 0.0.0.0:9876", address)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("-listen-address %q: the port must be 1 to 65535", address)
	}
	return host, port, nil
}

// isSet reports whether the flag was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
