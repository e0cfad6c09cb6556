package status

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"helm.sh/helm/v3/pkg/release"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/readiness"
)

// ReleaseReader reads Helm releases.
type ReleaseReader interface {
	// Last returns the newest revision of a release, or nil when there is
	// none.
	Last(name, namespace string) (*release.Release, error)
}

// NotInstalled is the State of a component without a release.
const NotInstalled = "not installed"

// Component is the state of one component.
type Component struct {
	// Name is the component's name.
	Name string
	// Namespace is its release namespace.
	Namespace string
	// Pinned is the version the installer installs.
	Pinned string
	// Installed is the version of the installed chart; empty when not
	// installed.
	Installed string
	// Revision is the release revision; zero when not installed.
	Revision int
	// State is the Helm release status, or NotInstalled.
	State string
	// Ready is true when the component is installed and every readiness
	// check holds.
	Ready bool
	// Problems lists what is wrong, in the order found.
	Problems []string
}

// Collect evaluates every release once, without waiting.
func Collect(ctx context.Context, c ctrlruntimeclient.Reader, h ReleaseReader, releases []components.Release) ([]Component, error) {
	out := make([]Component, 0, len(releases))
	for _, r := range releases {
		st, err := collect(ctx, c, h, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Name, err)
		}
		out = append(out, st)
	}
	return out, nil
}

func collect(ctx context.Context, c ctrlruntimeclient.Reader, h ReleaseReader, r components.Release) (Component, error) {
	st := Component{Name: r.Name, Namespace: r.Namespace, Pinned: r.Version, State: NotInstalled}
	rel, err := h.Last(r.Name, r.Namespace)
	if err != nil {
		return st, err
	}
	if rel == nil {
		st.Problems = append(st.Problems, NotInstalled)
		return st, nil
	}
	st.Revision = rel.Version
	if rel.Info != nil {
		st.State = string(rel.Info.Status)
	}
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		st.Installed = rel.Chart.Metadata.AppVersion
		if rel.Chart.Metadata.Annotations[components.ChartAnnotation] != r.Name {
			st.Problems = append(st.Problems, "release was not installed by kubevirt-installer")
			return st, nil
		}
	}
	if st.State != string(release.StatusDeployed) {
		st.Problems = append(st.Problems, "release is "+st.State)
	}
	if st.Installed != r.Version {
		st.Problems = append(st.Problems, fmt.Sprintf("installed %s, pinned %s: run upgrade", st.Installed, r.Version))
	}
	checks, err := readiness.ForComponent(r.Component, rel.Manifest)
	if err != nil {
		return st, err
	}
	st.Ready = len(st.Problems) == 0
	for _, check := range checks {
		res, err := check.Evaluate(ctx, c)
		if err != nil {
			return st, err
		}
		if !res.Ready {
			st.Ready = false
			st.Problems = append(st.Problems, check.Object()+": "+res.Message)
		}
	}
	return st, nil
}

// Write prints the components as a table, one line per problem.
func Write(w io.Writer, cs []Component) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tNAMESPACE\tPINNED\tINSTALLED\tREVISION\tSTATUS\tREADY\tPROBLEMS")
	for _, c := range cs {
		problems := c.Problems
		if len(problems) == 0 {
			problems = []string{"-"}
		}
		cells := []string{c.Name, c.Namespace, c.Pinned, dash(c.Installed), dash(revision(c.Revision)), c.State, yesNo(c.Ready), problems[0]}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
		for _, p := range problems[1:] {
			fmt.Fprintln(tw, strings.Repeat("\t", 7)+p)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("failed to write the status table: %w", err)
	}
	return nil
}

// AllReady reports whether every component is ready.
func AllReady(cs []Component) bool {
	for _, c := range cs {
		if !c.Ready {
			return false
		}
	}
	return true
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func revision(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
