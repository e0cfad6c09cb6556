package installer

import (
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flags"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/readiness"
)

// Container names a container of the workloads a chart renders.
type Container struct {
	// Chart is the chart's directory, components.Component.Chart.
	Chart string
	// Name is the container's name.
	Name string
}

// ArgsCheck checks a container's arguments as the binary it runs parses
// them, with the binary's own code; the error is the binary's.
type ArgsCheck func(args []string) error

// binaries are the command-line parsers of this project's binaries, by
// the chart container that runs each. Validate calls the parser of every
// such container with the arguments the chart renders for it, so a value
// the binary would refuse at start (and crash-loop on) is refused before
// the installer writes anything. A binary is added with an entry here
// once its parser is a package of its own, as the infra-controller's is.
var binaries = map[Container]ArgsCheck{
	{Chart: "infra-controller", Name: "infra-controller"}: func(args []string) error {
		_, err := flags.Parse(args, io.Discard)
		return err
	},
}

// workload is the part of a rendered object that holds containers.
type workload struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Template struct {
			Spec struct {
				InitContainers []container `json:"initContainers"`
				Containers     []container `json:"containers"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

type container struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
}

// checkArgs checks the arguments of every container of manifest, the
// rendered release r, that runs one of checks' binaries; it returns the
// errors of all of them and how many containers it checked.
func checkArgs(r components.Release, manifest string, checks map[Container]ArgsCheck) (int, error) {
	var errs []error
	checked := 0
	for _, doc := range readiness.Documents(manifest) {
		var w workload
		if err := yaml.Unmarshal([]byte(doc), &w); err != nil {
			return checked, fmt.Errorf("failed to parse a rendered object: %w", err)
		}
		for _, c := range append(w.Spec.Template.Spec.InitContainers, w.Spec.Template.Spec.Containers...) {
			check := checks[Container{Chart: r.Component.Chart, Name: c.Name}]
			if check == nil {
				continue
			}
			checked++
			if err := check(c.Args); err != nil {
				errs = append(errs, fmt.Errorf("%s %s/%s would not start: its container %s refuses the arguments rendered from the values: %w",
					w.Kind, r.Namespace, w.Metadata.Name, c.Name, err))
			}
		}
	}
	return checked, errors.Join(errs...)
}
