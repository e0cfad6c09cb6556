package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"

	"k8s.io/client-go/rest"
)

// maxHistory is the number of release revisions Helm keeps.
const maxHistory = 5

// description is recorded in every release revision the installer writes.
const description = "kubevirt-installer"

// Client runs Helm actions against one cluster.
type Client struct {
	config *rest.Config
	log    io.Writer
	// Timeout bounds each action (not the readiness waits, which the
	// installer does itself).
	Timeout time.Duration
}

// NewClient returns a client for the cluster of config. Helm's debug log
// goes to log; nil discards it.
func NewClient(config *rest.Config, log io.Writer) *Client {
	if log == nil {
		log = io.Discard
	}
	return &Client{config: config, log: log, Timeout: 5 * time.Minute}
}

func (c *Client) configuration(namespace string) (*action.Configuration, error) {
	getter, err := newRESTGetter(c.config, namespace)
	if err != nil {
		return nil, err
	}
	cfg := &action.Configuration{}
	logf := func(format string, v ...any) { fmt.Fprintf(c.log, format+"\n", v...) }
	if err := cfg.Init(getter, namespace, "secret", logf); err != nil {
		return nil, fmt.Errorf("failed to initialize Helm for namespace %s: %w", namespace, err)
	}
	return cfg, nil
}

// Last returns the newest revision of a release, whatever its status, or nil
// when the release does not exist.
func (c *Client) Last(name, namespace string) (*release.Release, error) {
	cfg, err := c.configuration(namespace)
	if err != nil {
		return nil, err
	}
	rel, err := cfg.Releases.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read release %s/%s: %w", namespace, name, err)
	}
	return rel, nil
}

// Install installs a chart as a new release, without its CRDs and without
// waiting for readiness.
func (c *Client) Install(ctx context.Context, ch *chart.Chart, name, namespace string, values map[string]any) (*release.Release, error) {
	cfg, err := c.configuration(namespace)
	if err != nil {
		return nil, err
	}
	install := action.NewInstall(cfg)
	install.ReleaseName = name
	install.Namespace = namespace
	install.SkipCRDs = true
	install.Timeout = c.Timeout
	install.Description = description
	rel, err := install.RunWithContext(ctx, ch, values)
	if err != nil {
		return nil, fmt.Errorf("failed to install release %s/%s: %w", namespace, name, err)
	}
	return rel, nil
}

// Upgrade upgrades a release to a chart and values, without its CRDs and
// without waiting for readiness. The values replace the previous ones. A
// dry run renders the new revision without changing the cluster.
func (c *Client) Upgrade(ctx context.Context, ch *chart.Chart, name, namespace string, values map[string]any, dryRun bool) (*release.Release, error) {
	cfg, err := c.configuration(namespace)
	if err != nil {
		return nil, err
	}
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = namespace
	upgrade.SkipCRDs = true
	upgrade.ResetValues = true
	upgrade.MaxHistory = maxHistory
	upgrade.Timeout = c.Timeout
	upgrade.Description = description
	upgrade.DryRun = dryRun
	// A dry run only feeds the comparison with the current release; the
	// real upgrade validates against the server's OpenAPI schema.
	upgrade.DisableOpenAPIValidation = dryRun
	rel, err := upgrade.RunWithContext(ctx, name, ch, values)
	if err != nil {
		return nil, fmt.Errorf("failed to upgrade release %s/%s: %w", namespace, name, err)
	}
	return rel, nil
}

// Uninstall deletes a release and every object of its manifest. A release
// that does not exist is not an error.
func (c *Client) Uninstall(name, namespace string) error {
	cfg, err := c.configuration(namespace)
	if err != nil {
		return err
	}
	uninstall := action.NewUninstall(cfg)
	uninstall.IgnoreNotFound = true
	uninstall.Timeout = c.Timeout
	uninstall.Description = description
	if _, err := uninstall.Run(name); err != nil {
		return fmt.Errorf("failed to uninstall release %s/%s: %w", namespace, name, err)
	}
	return nil
}
