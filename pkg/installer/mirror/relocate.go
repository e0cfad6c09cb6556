package mirror

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/images"
)

// Registry is a private registry host with an optional repository path
// prefix, for example "reg.local:5000/mirror".
type Registry struct {
	// Host is the registry host and optional port.
	Host string
	// Prefix is the repository path under which images are stored; empty
	// for the registry's root.
	Prefix string
}

// ParseRegistry parses HOST[:PORT][/PATH].
func ParseRegistry(s string) (Registry, error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "/")
	if s == "" {
		return Registry{}, fmt.Errorf("the registry is empty; want HOST[:PORT][/PATH]")
	}
	if strings.Contains(s, "://") {
		return Registry{}, fmt.Errorf("registry %q has a scheme; want HOST[:PORT][/PATH]", s)
	}
	host, prefix, _ := strings.Cut(s, "/")
	if _, err := name.NewRegistry(host, name.StrictValidation); err != nil {
		return Registry{}, fmt.Errorf("failed to parse registry %q: %w", s, err)
	}
	r := Registry{Host: host, Prefix: prefix}
	if prefix != "" {
		if _, err := name.NewRepository(host+"/"+prefix+"/x", name.StrictValidation); err != nil {
			return Registry{}, fmt.Errorf("failed to parse registry path %q: %w", prefix, err)
		}
	}
	return r, nil
}

// String returns HOST[/PATH].
func (r Registry) String() string {
	if r.Prefix == "" {
		return r.Host
	}
	return r.Host + "/" + r.Prefix
}

// Relocate returns ref moved to r: the registry host replaced by r, the
// repository path kept under r's prefix, the tag or digest kept.
func (r Registry) Relocate(ref string) (string, error) {
	parsed, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("failed to parse image %q: %w", ref, err)
	}
	return r.String() + "/" + parsed.Context().RepositoryStr() + separator(parsed) + parsed.Identifier(), nil
}

// RelocateSet returns a copy of set with every reference relocated to r.
func (r Registry) RelocateSet(set images.Set) (images.Set, error) {
	out := make(images.Set, 0, len(set))
	for _, img := range set {
		ref, err := r.Relocate(img.Ref)
		if err != nil {
			return nil, err
		}
		img.Ref = ref
		img.EnvVars = append([]string(nil), img.EnvVars...)
		out = append(out, img)
	}
	return out, nil
}

// separator is the character between a reference's repository and its
// identifier.
func separator(ref name.Reference) string {
	if _, ok := ref.(name.Digest); ok {
		return "@"
	}
	return ":"
}

// Mirrors maps upstream registry hosts to the registries images are pulled
// from instead, for example a pull-through cache: {"quay.io":
// "cache.local/quay"}. An empty map pulls from upstream.
type Mirrors map[string]Registry

// ParseMirrors parses HOST=REGISTRY pairs.
func ParseMirrors(pairs map[string]string) (Mirrors, error) {
	m := make(Mirrors, len(pairs))
	for host, target := range pairs {
		r, err := ParseRegistry(target)
		if err != nil {
			return nil, fmt.Errorf("failed to parse the pull mirror of %s: %w", host, err)
		}
		reg, err := name.NewRegistry(host, name.StrictValidation)
		if err != nil {
			return nil, fmt.Errorf("failed to parse the registry %q of a pull mirror: %w", host, err)
		}
		m[reg.RegistryStr()] = r
	}
	return m, nil
}

// Source returns the reference ref is pulled from: ref itself, or ref
// relocated to the mirror of its registry.
func (m Mirrors) Source(ref string) (name.Reference, error) {
	parsed, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("failed to parse image %q: %w", ref, err)
	}
	mirror, ok := m[parsed.Context().RegistryStr()]
	if !ok {
		return parsed, nil
	}
	moved, err := mirror.Relocate(ref)
	if err != nil {
		return nil, err
	}
	return parseDestination(moved)
}

// parseDestination parses a relocated reference.
func parseDestination(ref string) (name.Reference, error) {
	parsed, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("failed to parse image %q: %w", ref, err)
	}
	return parsed, nil
}
