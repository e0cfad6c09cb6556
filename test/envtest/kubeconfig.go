package envtest

import (
	"fmt"
	"net/url"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigName names the cluster, user and context of generated kubeconfigs.
const kubeconfigName = "envtest"

// kubeconfigFor renders a kubeconfig that reaches the API server of cfg with
// its credentials. A non-empty namespace becomes the current context's
// namespace.
func kubeconfigFor(cfg *rest.Config, namespace string) ([]byte, error) {
	server, err := serverURL(cfg)
	if err != nil {
		return nil, err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[kubeconfigName] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos[kubeconfigName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
	}
	kc.Contexts[kubeconfigName] = &clientcmdapi.Context{
		Cluster:   kubeconfigName,
		AuthInfo:  kubeconfigName,
		Namespace: namespace,
	}
	kc.CurrentContext = kubeconfigName
	out, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("failed to serialize kubeconfig: %w", err)
	}
	return out, nil
}

// serverURL is cfg.Host with a scheme, which rest.Config allows to omit.
func serverURL(cfg *rest.Config) (string, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return "", fmt.Errorf("failed to parse API server host %q: %w", cfg.Host, err)
	}
	if u.Scheme == "" || u.Host == "" {
		scheme := "https"
		if !rest.IsConfigTransportTLS(*cfg) {
			scheme = "http"
		}
		u = &url.URL{Scheme: scheme, Host: cfg.Host}
	}
	u.Path = cfg.APIPath
	return u.String(), nil
}
