package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// PlaceholderUserData stands in for the user data that operating-system-manager
// renders at run time.
const PlaceholderUserData = "#cloud-config\n# Placeholder: the real user data is rendered per Machine at run time.\n"

// FactsSource looks up on the infra cluster what the builder needs to know.
type FactsSource interface {
	Facts(ctx context.Context, settings *config.Settings, machine vm.MachineInfo) (vm.Facts, error)
}

// Judge submits the objects of one Machine to the infra cluster with
// server-side dry-run (see kubevirt.Provider.DryRun): notes for what it
// could not judge, an error for what it refused.
type Judge interface {
	DryRun(ctx context.Context, settings *config.Settings, objs *vm.Objects) ([]string, error)
}

// Options configure one render run.
type Options struct {
	// Files to read; "-" reads In.
	Files []string
	// Output is "yaml" (default) or "json".
	Output string
	// Namespace overrides the infra namespace.
	Namespace string
	// Facts looks facts up on an infra cluster; nil renders offline with
	// defaults and touches no cluster.
	Facts FactsSource
	// Judge, when set, asks the infra cluster's admission about every
	// rendered Machine; when nil, a note says that no verdict was asked.
	Judge Judge
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string

	In  io.Reader
	Out io.Writer
	// ErrOut receives the warnings of the specs (converted or ignored
	// input), so that Out stays parseable; nil discards them.
	ErrOut io.Writer
}

// Run reads every file, then renders every object. Each file must hold at
// least one object. It stops at the first invalid input or object and
// returns its error, which locates the object and carries the message the
// controller would report.
func (o *Options) Run(ctx context.Context) error {
	if o.Output == "" {
		o.Output = "yaml"
	}
	if o.Output != "yaml" && o.Output != "json" {
		return fmt.Errorf("output %q is not supported: use yaml or json", o.Output)
	}
	if len(o.Files) == 0 {
		return errors.New("no input: give one or more files with -f (\"-\" reads stdin)")
	}
	var sources []source
	for _, name := range o.Files {
		s, err := o.read(name)
		if err != nil {
			return err
		}
		sources = append(sources, s...)
	}
	var objs []runtime.Object
	for _, src := range sources {
		rendered, err := o.renderOne(ctx, src)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", src.where, src.ref, err)
		}
		objs = append(objs, rendered.VirtualMachine, rendered.UserDataSecret)
		if rendered.SSHService != nil {
			objs = append(objs, rendered.SSHService)
		}
	}
	if err := o.print(objs); err != nil {
		return err
	}
	if o.Judge == nil {
		return o.note("no verdict asked: without --infra-kubeconfig, neither KubeVirt's nor CDI's admission judged these objects")
	}
	return nil
}

// note prints a line on ErrOut.
func (o *Options) note(line string) error {
	if o.ErrOut == nil {
		return nil
	}
	if _, err := fmt.Fprintf(o.ErrOut, "Note: %s\n", line); err != nil {
		return fmt.Errorf("failed to print a note: %w", err)
	}
	return nil
}

func (o *Options) read(name string) ([]source, error) {
	if name == "-" {
		if o.In == nil {
			return nil, errors.New("stdin is not available")
		}
		return readSources(o.In, "stdin")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("failed to open input: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only: nothing to flush
	return readSources(f, name)
}

func (o *Options) renderOne(ctx context.Context, src source) (*vm.Objects, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	settings, warnings, err := config.Load(ctx, src.providerSpec, offlineResolver{}, config.Options{Getenv: getenv})
	if err := o.warn(src, warnings); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	facts, err := o.facts(ctx, settings, src.machine)
	if err != nil {
		return nil, err
	}
	objs, err := vm.Build(vm.Input{Settings: settings, Machine: src.machine, Facts: facts, UserData: PlaceholderUserData})
	if err != nil || o.Judge == nil {
		return objs, err
	}
	notes, err := o.Judge.DryRun(ctx, settings, objs)
	for _, n := range notes {
		if err := o.note(fmt.Sprintf("%s: %s: %s", src.where, src.ref, n)); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	return objs, nil
}

// warn prints the warnings of one object, each on a line of its own.
func (o *Options) warn(src source, warnings []string) error {
	if o.ErrOut == nil {
		return nil
	}
	for _, w := range warnings {
		if _, err := fmt.Fprintf(o.ErrOut, "Warning: %s: %s: %s\n", src.where, src.ref, w); err != nil {
			return fmt.Errorf("failed to print a warning: %w", err)
		}
	}
	return nil
}

func (o *Options) facts(ctx context.Context, settings *config.Settings, machine vm.MachineInfo) (vm.Facts, error) {
	var facts vm.Facts
	if o.Facts != nil {
		f, err := o.Facts.Facts(ctx, settings, machine)
		if err != nil {
			return vm.Facts{}, fmt.Errorf("failed to look up the infra cluster: %w", err)
		}
		facts = f
	} else {
		ns, err := offlineNamespace(settings)
		if err != nil {
			return vm.Facts{}, err
		}
		facts = vm.Facts{Namespace: ns}
		if len(settings.Zones) > 0 {
			facts.SpreadZone = settings.Zones[0]
		}
	}
	if o.Namespace != "" {
		facts.Namespace = o.Namespace
	}
	return facts, nil
}

func (o *Options) print(objs []runtime.Object) error {
	if o.Output == "json" {
		list := &corev1.List{}
		list.APIVersion, list.Kind = "v1", "List"
		for _, obj := range objs {
			list.Items = append(list.Items, runtime.RawExtension{Object: obj})
		}
		enc := json.NewEncoder(o.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	for i, obj := range objs {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return fmt.Errorf("failed to encode %T: %w", obj, err)
		}
		if i > 0 {
			if _, err := io.WriteString(o.Out, "---\n"); err != nil {
				return err
			}
		}
		if _, err := o.Out.Write(b); err != nil {
			return err
		}
	}
	return nil
}
