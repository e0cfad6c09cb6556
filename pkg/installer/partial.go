package installer

import (
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/release"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

// PartialError is the error of an Install that stopped at a component: it
// says which releases are in place, what the failed component left behind
// and how to resume or roll back.
type PartialError struct {
	// Converged are the components converged before the failure, in order.
	Converged []Result
	// Failed is the component that failed.
	Failed string
	// Left describes what the failed component left on the cluster, e.g.
	// "namespace kubevirt, 1 CRD, release kubevirt/kubevirt revision 1
	// (deployed)"; "nothing" when it wrote nothing.
	Left string
	// NotStarted are the components after the failed one.
	NotStarted []string
	// Fresh is set when no component was installed before this run, so an
	// uninstall removes exactly what the run installed.
	Fresh bool
	// Unchanged is set when the run changed nothing on the cluster.
	Unchanged bool
	// Command is the command that resumes: "install" or "upgrade".
	Command string
	// Err is the failure.
	Err error
}

// Error reports the failure, then the state and the ways on.
func (e *PartialError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v\n", e.Failed, e.Err)
	if e.Unchanged {
		fmt.Fprintf(&b, "the %s stopped at %s before changing anything on the cluster", e.Command, e.Failed)
		return b.String()
	}
	fmt.Fprintf(&b, "the %s stopped at %s; the cluster now has:\n", e.Command, e.Failed)
	done := make([]string, 0, len(e.Converged))
	for _, r := range e.Converged {
		done = append(done, fmt.Sprintf("%s (%s, revision %d)", r.Component, r.Action, r.Revision))
	}
	fmt.Fprintf(&b, "  ready: %s\n", orNone(done))
	fmt.Fprintf(&b, "  left by %s: %s\n", e.Failed, e.Left)
	fmt.Fprintf(&b, "  not started: %s\n", orNone(e.NotStarted))
	fmt.Fprintf(&b, "to resume, fix the cause and run `kubevirt-installer %s` again with the same flags: "+
		"it leaves the ready components unchanged and continues with %s\n", e.Command, e.Failed)
	if e.Fresh {
		b.WriteString("to roll back, run `kubevirt-installer uninstall` (add --crds to delete the CRDs too): " +
			"no component was installed before this run, so it removes exactly what this run installed")
	} else {
		b.WriteString("components were installed before this run, so there is nothing to roll back to: " +
			"`kubevirt-installer uninstall` would remove the whole installation")
	}
	return b.String()
}

// Unwrap returns the failure.
func (e *PartialError) Unwrap() error { return e.Err }

// nothing is PartialError.Left when the failed component wrote nothing.
const nothing = "nothing"

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// trace records what converging one component found and wrote, for the
// report of an install that stops there.
type trace struct {
	// previous is the release before, nil if there was none.
	previous *release.Release
	// wrote lists what was applied, e.g. "namespace kubevirt".
	wrote []string
}

// stopped builds the PartialError of an install that failed at releases[n]
// after converging results.
func (i *Installer) stopped(n int, results []Result, t *trace, upgrade bool, err error) *PartialError {
	r := i.Releases[n]
	left, changed := i.leftBy(r, t)
	e := &PartialError{
		Converged: results, Failed: r.Name, Left: left, Command: "install", Err: err,
		Fresh: t.previous == nil, Unchanged: !changed,
	}
	if upgrade {
		e.Command = "upgrade"
	}
	for _, res := range results {
		e.Fresh = e.Fresh && res.Action == ActionInstalled
		e.Unchanged = e.Unchanged && res.Action == ActionUnchanged
	}
	for _, later := range i.Releases[n+1:] {
		e.NotStarted = append(e.NotStarted, later.Name)
	}
	return e
}

// leftBy describes what converging r left, what it applied and the state of
// its release read back from the cluster, and reports whether it changed
// anything.
func (i *Installer) leftBy(r components.Release, t *trace) (string, bool) {
	parts := append([]string(nil), t.wrote...)
	changed := len(parts) > 0
	last, err := i.Helm.Last(r.Name, r.Namespace)
	name := r.Namespace + "/" + r.Name
	switch {
	case err != nil:
		parts = append(parts, fmt.Sprintf("release %s in a state that could not be read (%v)", name, err))
		changed = true
	case last == nil:
	case t.previous != nil && last.Version == t.previous.Version:
		parts = append(parts, fmt.Sprintf("release %s unchanged at revision %d (%s)", name, last.Version, status(last)))
	default:
		parts = append(parts, fmt.Sprintf("release %s revision %d (%s)", name, last.Version, status(last)))
		changed = true
	}
	if len(parts) == 0 {
		return nothing, changed
	}
	return strings.Join(parts, ", "), changed
}

func status(rel *release.Release) release.Status {
	if rel.Info == nil {
		return release.StatusUnknown
	}
	return rel.Info.Status
}
