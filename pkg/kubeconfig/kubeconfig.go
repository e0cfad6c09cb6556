// Package kubeconfig reads the kubeconfigs through which the controllers
// reach other clusters (the infra cluster of a providerSpec or of the
// machine-controller, the tenant clusters of the infra-controller). It is
// the one place that decides whether a kubeconfig is usable and says why
// not.
//
// Two kinds of kubeconfig reach these processes. Most come from users:
// providerSpecs and the Secrets they reference, KUBEVIRT_KUBECONFIG (under
// Kubermatic the credentials of the cluster's datacenter), the Secrets of
// TenantClusters. Parse and Problem take those as untrusted: a kubeconfig
// that would run a program (exec, auth-provider) or read a file (tokenFile,
// client-certificate, client-key, certificate-authority) is refused, as are
// credentials in a server URL and proxies that are not HTTP(S); only inline
// data is used. The files an operator names in flags are trusted, as
// kubectl trusts them (ReadOperatorFile, OperatorConfig).
//
// Messages never contain any part of a kubeconfig but the names of its
// entries: they reach logs, events, conditions and admission responses, and
// a kubeconfig holds credentials.
package kubeconfig

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/lru"
)

// ErrInvalid marks a kubeconfig that gives no usable client configuration.
// Retrying with the same kubeconfig cannot help.
var ErrInvalid = errors.New("not a valid kubeconfig (check it with kubectl --kubeconfig)")

// Parse returns the client configuration of data's current context and
// that context's namespace ("" when it names none). data is untrusted (see
// the package documentation) unless it is the content of a file given to
// ReadOperatorFile. Errors wrap ErrInvalid and say what is wrong, as
// Problem does.
func Parse(data []byte) (*rest.Config, string, error) {
	restConfig, namespace, problem := parse(data)
	if problem != "" {
		return nil, "", fmt.Errorf("%w: %s", ErrInvalid, problem)
	}
	return restConfig, namespace, nil
}

// verdictsKept bounds how many kubeconfigs' verdicts Problem remembers:
// a controller checks the few it is given (one per infra cluster or
// tenant, and their rotations) again and again.
const verdictsKept = 64

// verdicts maps the SHA-256 of recently checked kubeconfigs to Problem's
// answer. The provider checks the infra kubeconfig of a Machine's spec on
// every reconcile, and parsing it (YAML, then certificates) was a fifth of
// the machine-controller's allocations; only digests and verdicts are
// kept, never a kubeconfig.
var verdicts = lru.New(verdictsKept)

// Problem returns why data is not a usable kubeconfig, or "" when it is;
// data is untrusted as for Parse.
func Problem(data []byte) string {
	key := sha256.Sum256(data)
	if v, ok := verdicts.Get(key); ok {
		return v.(string)
	}
	_, _, problem := parse(data)
	verdicts.Add(key, problem)
	return problem
}

// parse returns the client configuration and namespace of data's current
// context, or the problem.
func parse(data []byte) (*rest.Config, string, string) {
	cfg, trusted := operatorFile(data)
	if !trusted {
		var problem string
		if cfg, problem = load(data); problem != "" {
			return nil, "", problem
		}
	}
	restConfig, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		// clientcmd's message is left out: it may quote values of the
		// kubeconfig.
		return nil, "", unusable
	}
	if !trusted && fromFiles(restConfig) {
		return nil, "", "the kubeconfig would run a program or read a file; " + inlineOnly
	}
	return restConfig, cfg.Contexts[cfg.CurrentContext].Namespace, ""
}

// unusable is the problem of a kubeconfig whose parts are all there but do
// not make a client configuration (unreadable certificates, say).
const unusable = "the kubeconfig's current context does not give a usable client configuration"

// load parses untrusted data and checks that it holds inline data only
// and that its current context names a cluster with a server; it returns
// the parsed kubeconfig or the problem.
func load(data []byte) (*clientcmdapi.Config, string) {
	if len(data) > MaxSize {
		return nil, fmt.Sprintf("the kubeconfig is too large: %d bytes, at most %d are read", len(data), MaxSize)
	}
	cfg, err := clientcmd.Load(data)
	switch {
	case err != nil:
		return nil, "must be a kubeconfig in YAML or JSON format, but it could not be parsed"
	case cfg.CurrentContext == "":
		return nil, "the kubeconfig must set current-context"
	}
	kubeContext, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || kubeContext == nil {
		return nil, "the current context of the kubeconfig is not among its contexts"
	}
	if cluster, ok := cfg.Clusters[kubeContext.Cluster]; !ok || cluster == nil || cluster.Server == "" {
		return nil, "the cluster of the kubeconfig's current context must be defined and have a server"
	}
	if problem := refusal(cfg); problem != "" {
		return nil, problem
	}
	return cfg, ""
}
