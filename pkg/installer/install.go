package installer

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/release"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/crds"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/helm"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/readiness"
)

// Options configure Install.
type Options struct {
	// Values are the user's chart values by component name.
	Values map[string]map[string]any
	// Upgrade allows moving installed components to their pinned version.
	// Without it, Install refuses to change a component's version.
	Upgrade bool
}

// Action is what converging one component did.
type Action string

// The actions of Install.
const (
	ActionInstalled  Action = "installed"
	ActionUpgraded   Action = "upgraded"
	ActionConfigured Action = "reconfigured"
	ActionUnchanged  Action = "unchanged"
)

// Result is the outcome of converging one component.
type Result struct {
	// Component is the component's name.
	Component string
	// Action is what was done.
	Action Action
	// Revision is the release revision afterwards.
	Revision int
}

// Install converges every release in dependency order: namespace, CRDs, Helm
// release, then a wait until the component is ready before the next one
// starts. A component whose release would not change is left alone, so a
// second run changes nothing, and a run after a failed one continues where
// that stopped.
//
// The values of every release are validated first (Validate): with any
// problem, nothing is written. A failure after that is a *PartialError that
// says what is in place and how to resume or roll back.
func (i *Installer) Install(ctx context.Context, opts Options) ([]Result, error) {
	if err := Validate(i.Releases, opts.Values); err != nil {
		return nil, fmt.Errorf("the values are refused, nothing was changed:\n%w", err)
	}
	p := printer{w: i.Out}
	results := make([]Result, 0, len(i.Releases))
	for n, r := range i.Releases {
		p.stepf(n+1, len(i.Releases), "%s %s (release %s/%s)", r.Name, r.Version, r.Namespace, r.Name)
		t := &trace{}
		res, err := i.converge(ctx, r, opts.Values[r.Name], opts.Upgrade, p, t)
		if err != nil {
			return results, i.stopped(n, results, t, opts.Upgrade, err)
		}
		results = append(results, res)
	}
	return results, nil
}

// converge brings one component to its pinned version and the given values
// and waits until it is ready, recording in t what it found and wrote.
// Nothing is written before the existing release has been checked.
func (i *Installer) converge(ctx context.Context, r components.Release, user map[string]any, upgrade bool, p printer, t *trace) (Result, error) {
	values, err := r.Values(user)
	if err != nil {
		return Result{}, err
	}
	current, err := i.Helm.Last(r.Name, r.Namespace)
	if err != nil {
		return Result{}, err
	}
	t.previous = current
	if err := checkCurrent(r, current, upgrade); err != nil {
		return Result{}, err
	}
	if r.ManagedNamespace {
		if err := i.ensureNamespace(ctx, r.Component); err != nil {
			return Result{}, err
		}
		t.wrote = append(t.wrote, "namespace "+r.Namespace)
	}
	if err := i.applyCRDs(ctx, r, t); err != nil {
		return Result{}, err
	}
	rel, action, err := i.release(ctx, r, current, values)
	if err != nil {
		return Result{}, err
	}
	p.notef("%s, revision %d", action, rel.Version)
	if err := i.waitReady(ctx, r.Component, rel.Manifest, p); err != nil {
		return Result{}, err
	}
	p.notef("ready")
	return Result{Component: r.Name, Action: action, Revision: rel.Version}, nil
}

// checkCurrent refuses to proceed with an existing release the installer did
// not create, one another Helm operation left pending, and a version change
// that is not an allowed upgrade.
func checkCurrent(r components.Release, current *release.Release, upgrade bool) error {
	if current == nil {
		return nil
	}
	if err := checkOwnership(r, current); err != nil {
		return err
	}
	installed := current.Chart.Metadata.AppVersion
	if installed == r.Version {
		return nil
	}
	if !upgrade {
		return fmt.Errorf("%s is installed at %s, the installer pins %s; run `kubevirt-installer upgrade`", r.Name, installed, r.Version)
	}
	return components.CheckUpgrade(r.Component, installed)
}

// applyCRDs applies the chart's CRDs and waits until they are served.
func (i *Installer) applyCRDs(ctx context.Context, r components.Release, t *trace) error {
	objs, err := crds.FromChart(r.Chart)
	if err != nil || len(objs) == 0 {
		return err
	}
	if err := crds.Apply(ctx, i.Client, r.Name, objs); err != nil {
		return err
	}
	t.wrote = append(t.wrote, fmt.Sprintf("CRDs %s", strings.Join(crds.Names(objs), ", ")))
	return crds.WaitEstablished(ctx, i.Client, i.Discovery, crds.Names(objs), i.Poller)
}

// release installs, upgrades or keeps the Helm release of r; current is
// the existing release, already checked by checkCurrent.
func (i *Installer) release(ctx context.Context, r components.Release, current *release.Release, values map[string]any) (*release.Release, Action, error) {
	if current == nil {
		rel, err := i.Helm.Install(ctx, r.Chart, r.Name, r.Namespace, values)
		return rel, ActionInstalled, err
	}
	action := ActionUpgraded
	if current.Chart.Metadata.AppVersion == r.Version {
		action = ActionConfigured
		planned, err := i.Helm.Upgrade(ctx, r.Chart, r.Name, r.Namespace, values, true)
		if err != nil {
			return nil, "", err
		}
		unchanged, err := helm.Unchanged(current, planned)
		if err != nil {
			return nil, "", err
		}
		if unchanged {
			return current, ActionUnchanged, nil
		}
	}
	rel, err := i.Helm.Upgrade(ctx, r.Chart, r.Name, r.Namespace, values, false)
	return rel, action, err
}

// checkOwnership refuses releases the installer did not create and releases
// another Helm operation left pending.
func checkOwnership(r components.Release, current *release.Release) error {
	if !ours(r, current) {
		return fmt.Errorf("release %s/%s exists but was not installed by kubevirt-installer; uninstall it first", r.Namespace, r.Name)
	}
	if current.Info != nil && current.Info.Status.IsPending() {
		return fmt.Errorf("release %s/%s is %s: another Helm operation was interrupted; roll it back (helm rollback) or uninstall it",
			r.Namespace, r.Name, current.Info.Status)
	}
	return nil
}

// ours reports whether rel was installed by the installer for r: its chart
// carries the component annotation.
func ours(r components.Release, rel *release.Release) bool {
	return rel.Chart != nil && rel.Chart.Metadata != nil &&
		rel.Chart.Metadata.Annotations[components.ChartAnnotation] == r.Name
}

// waitReady waits until every readiness check of the component holds,
// printing each change of state.
func (i *Installer) waitReady(ctx context.Context, c components.Component, manifest string, p printer) error {
	checks, err := readiness.ForComponent(c, manifest)
	if err != nil {
		return err
	}
	report := func(check readiness.Check, res readiness.Result) {
		if !res.Ready {
			p.notef("%s: %s", check.Object(), res.Message)
		}
	}
	if err := i.Poller.Wait(ctx, i.Client, checks, report); err != nil {
		return fmt.Errorf("%s is not ready: %w", c.Name, err)
	}
	return nil
}

// Images returns every image the releases run, operator-deployed ones
// included, sorted and without duplicates.
func Images(releases []components.Release) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range releases {
		for _, ref := range r.Images.Refs() {
			if !seen[ref] {
				seen[ref] = true
				out = append(out, ref)
			}
		}
	}
	sort.Strings(out)
	return out
}
