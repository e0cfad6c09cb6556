package installer

import (
	"fmt"
	"io"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/helm"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/readiness"
)

// Installer converges a cluster to the pinned component set.
type Installer struct {
	// Client reads and writes the cluster; it must not be cached.
	Client ctrlruntimeclient.Client
	// Helm runs the Helm actions.
	Helm *helm.Client
	// Releases are the components to manage, in dependency order.
	Releases []components.Release
	// Out receives progress messages.
	Out io.Writer
	// Poller paces and bounds every wait.
	Poller readiness.Poller
	// Discovery is asked, uncached, whether applied CRDs are served.
	Discovery discovery.DiscoveryInterface
}

// New returns an installer for the cluster of config. Progress goes to out
// and Helm's debug log to helmLog; nil discards either.
func New(config *rest.Config, releases []components.Release, out, helmLog io.Writer, poller readiness.Poller) (*Installer, error) {
	c, err := NewClient(config)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(rest.CopyConfig(config))
	if err != nil {
		return nil, fmt.Errorf("failed to create a discovery client: %w", err)
	}
	if out == nil {
		out = io.Discard
	}
	return &Installer{
		Client:    c,
		Helm:      helm.NewClient(config, helmLog),
		Releases:  releases,
		Out:       out,
		Poller:    poller,
		Discovery: dc,
	}, nil
}

// Scheme returns the scheme of the installer's client: the built-in kinds and
// CustomResourceDefinitions. Operator resources are read as unstructured.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("failed to add the built-in kinds to the scheme: %w", err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("failed to add apiextensions to the scheme: %w", err)
	}
	return s, nil
}

// NewClient returns an uncached client for config with Scheme.
func NewClient(config *rest.Config) (ctrlruntimeclient.Client, error) {
	s, err := Scheme()
	if err != nil {
		return nil, err
	}
	c, err := ctrlruntimeclient.New(config, ctrlruntimeclient.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("failed to create a Kubernetes client: %w", err)
	}
	return c, nil
}

// printer writes progress: numbered steps and indented notes under them.
type printer struct {
	w io.Writer
}

func (p printer) stepf(n, total int, format string, args ...any) {
	fmt.Fprintf(p.w, "[%d/%d] %s\n", n, total, fmt.Sprintf(format, args...))
}

func (p printer) notef(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, line := range strings.Split(msg, "\n") {
		fmt.Fprintf(p.w, "      %s\n", line)
	}
}

// noteLine is notef for callbacks that pass a finished message.
func (p printer) noteLine(msg string) { p.notef("%s", msg) }

// isNoMatch reports whether err says the API server does not serve a kind,
// which for a deletion means there is nothing to delete.
func isNoMatch(err error) bool {
	return meta.IsNoMatchError(err)
}
