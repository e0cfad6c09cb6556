package helm

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restGetter gives Helm's Kubernetes client the clients of one rest.Config.
// Discovery is cached for the life of the getter, which is one action, so
// CRDs applied before the action are always known to it.
type restGetter struct {
	config    *rest.Config
	namespace string
	discovery discovery.CachedDiscoveryInterface
}

var _ genericclioptions.RESTClientGetter = (*restGetter)(nil)

func newRESTGetter(config *rest.Config, namespace string) (*restGetter, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(rest.CopyConfig(config))
	if err != nil {
		return nil, fmt.Errorf("failed to create a discovery client: %w", err)
	}
	return &restGetter{config: config, namespace: namespace, discovery: memory.NewMemCacheClient(dc)}, nil
}

// ToRESTConfig returns a copy of the configuration.
func (g *restGetter) ToRESTConfig() (*rest.Config, error) {
	return rest.CopyConfig(g.config), nil
}

// ToDiscoveryClient returns the getter's cached discovery client.
func (g *restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

// ToRESTMapper returns a mapper over the cached discovery client.
func (g *restGetter) ToRESTMapper() (meta.RESTMapper, error) {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(g.discovery)
	return restmapper.NewShortcutExpander(mapper, g.discovery, nil), nil
}

// ToRawKubeConfigLoader returns a client configuration whose namespace is the
// release namespace.
func (g *restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientConfig{config: g.config, namespace: g.namespace}
}

// clientConfig is a clientcmd.ClientConfig over a fixed rest.Config.
type clientConfig struct {
	config    *rest.Config
	namespace string
}

// RawConfig returns an empty kubeconfig: there is no file behind the
// configuration.
func (c clientConfig) RawConfig() (clientcmdapi.Config, error) {
	return *clientcmdapi.NewConfig(), nil
}

// ClientConfig returns a copy of the configuration.
func (c clientConfig) ClientConfig() (*rest.Config, error) {
	return rest.CopyConfig(c.config), nil
}

// Namespace returns the release namespace.
func (c clientConfig) Namespace() (string, bool, error) {
	return c.namespace, false, nil
}

// ConfigAccess returns the default kubeconfig loading rules; Helm's actions
// never use them.
func (c clientConfig) ConfigAccess() clientcmd.ConfigAccess {
	return clientcmd.NewDefaultClientConfigLoadingRules()
}
