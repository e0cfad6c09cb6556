package images

import (
	"fmt"
	"slices"
	"sort"

	"github.com/google/go-containerregistry/pkg/name"
)

// Image is one container image of a component version.
type Image struct {
	// Name is the image's short name, for example "virt-api".
	Name string
	// ValuesKey is the key of the image in the chart's images value.
	ValuesKey string
	// Ref is the full image reference, registry and tag included.
	Ref string
	// EnvVars are the operator environment variables that pass Ref on to
	// the operator; empty for images a chart runs itself.
	EnvVars []string
	// RunTime is true for images an operator deploys at run time rather
	// than the chart.
	RunTime bool
}

// Set is the images of one component version.
type Set []Image

// Refs returns the distinct references of s, sorted.
func (s Set) Refs() []string {
	refs := make([]string, 0, len(s))
	for _, img := range s {
		refs = append(refs, img.Ref)
	}
	sort.Strings(refs)
	return slices.Compact(refs)
}

// Values returns the chart value that carries s: a map from each image's
// ValuesKey to its reference.
func (s Set) Values() map[string]any {
	values := make(map[string]any, len(s))
	for _, img := range s {
		values[img.ValuesKey] = img.Ref
	}
	return values
}

// ByEnvVar returns the image passed on through the operator environment
// variable env.
func (s Set) ByEnvVar(env string) (Image, bool) {
	for _, img := range s {
		if slices.Contains(img.EnvVars, env) {
			return img, true
		}
	}
	return Image{}, false
}

// Validate checks that every reference parses strictly (registry, repository
// and tag or digest all explicit) and that names and values keys are unique.
func (s Set) Validate() error {
	names := map[string]bool{}
	keys := map[string]bool{}
	for _, img := range s {
		if img.Name == "" || img.ValuesKey == "" {
			return fmt.Errorf("image %q has no name or values key", img.Ref)
		}
		if names[img.Name] || keys[img.ValuesKey] {
			return fmt.Errorf("image %s (values key %s) is listed twice", img.Name, img.ValuesKey)
		}
		names[img.Name], keys[img.ValuesKey] = true, true
		if _, err := name.ParseReference(img.Ref, name.StrictValidation); err != nil {
			return fmt.Errorf("failed to parse the reference of image %s: %w", img.Name, err)
		}
	}
	return nil
}

// Pinned returns the image set of a component version from the table.
func Pinned(component, version string) (Set, error) {
	build, ok := table[key{component: component, version: version}]
	if !ok {
		return nil, fmt.Errorf("no pinned images for %s %s", component, version)
	}
	set := build()
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("invalid pinned images of %s %s: %w", component, version, err)
	}
	return set, nil
}
