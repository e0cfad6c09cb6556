package preflight

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"k8s.io/client-go/discovery"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/status"
)

// Severity grades a finding.
type Severity string

// The severities, from harmless to blocking.
const (
	OK      Severity = "ok"
	Warning Severity = "warning"
	Error   Severity = "error"
)

// Finding is the result of one check.
type Finding struct {
	// Check names the check.
	Check string
	// Severity grades the finding; Error blocks an installation.
	Severity Severity
	// Message explains the finding and, for problems, what to do.
	Message string
}

// Cluster is what the checks read.
type Cluster struct {
	// Client reads objects.
	Client ctrlruntimeclient.Reader
	// Discovery reports the server version.
	Discovery discovery.ServerVersionInterface
	// Releases reads Helm releases.
	Releases status.ReleaseReader
}

// Options describe the planned installation.
type Options struct {
	// Releases are the components to install.
	Releases []components.Release
	// UseEmulation is true when KubeVirt emulates CPUs in software, so
	// nodes need no KVM.
	UseEmulation bool
	// WorkloadNodeSelector selects the nodes virtual machines run on; empty
	// selects every node.
	WorkloadNodeSelector map[string]string
	// KVMNodeLabels are extra "key=value" labels that mark a node as KVM
	// capable.
	KVMNodeLabels []string
	// ScratchSpaceStorageClass is CDI's scratch space class, if set.
	ScratchSpaceStorageClass string
}

// check is one preflight check; it returns its findings.
type check func(ctx context.Context, cl Cluster, opts Options) ([]Finding, error)

// Run runs every check.
func Run(ctx context.Context, cl Cluster, opts Options) ([]Finding, error) {
	var out []Finding
	for _, c := range []check{kubernetesVersion, kvmNodes, nodeSizes, storageClasses, foreignInstallations, podSecurity} {
		findings, err := c(ctx, cl, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, findings...)
	}
	return out, nil
}

// HasErrors reports whether any finding blocks the installation.
func HasErrors(findings []Finding) bool {
	for _, f := range findings {
		if f.Severity == Error {
			return true
		}
	}
	return false
}

// Write prints the findings as a table.
func Write(w io.Writer, findings []Finding) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tRESULT\tMESSAGE")
	for _, f := range findings {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Check, f.Severity, f.Message)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("failed to write the preflight table: %w", err)
	}
	return nil
}

// has reports whether the planned installation includes the component.
func has(opts Options, name string) bool {
	_, ok := components.Find(opts.Releases, name)
	return ok
}

// list abbreviates a list of names for a message.
func list(names []string) string {
	const most = 5
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}
