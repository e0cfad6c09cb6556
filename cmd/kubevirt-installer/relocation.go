package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// relocationFlags move every image of the installation to a private
// registry and, for install, take the charts from an offline bundle.
type relocationFlags struct {
	registry string
	bundle   string
	key      keyFlag
}

func (r *relocationFlags) bind(f *pflag.FlagSet, withBundle bool) {
	f.StringVar(&r.registry, "registry", "", "private registry HOST[:PORT][/PATH] the images were mirrored to; every image, "+
		"including those the operators deploy, is pulled from there")
	if withBundle {
		f.StringVar(&r.bundle, "bundle", "", "offline bundle to install from (verified first; needs --registry)")
		r.key.bind(f)
	}
}

// releases loads the releases cfg selects, from the bundle if one is given,
// with their images relocated to the registry if one is given.
func (r *relocationFlags) releases(cfg *config.Configuration) ([]components.Release, error) {
	if r.bundle != "" && r.registry == "" {
		return nil, fmt.Errorf("--bundle needs --registry: the cluster pulls the bundle's images from the registry " +
			"`kubevirt-installer bundle push` copied them to")
	}
	if r.key.file != "" && r.bundle == "" {
		return nil, fmt.Errorf("--key checks the signature of --bundle, and no --bundle is given")
	}
	var (
		releases []components.Release
		err      error
	)
	if r.bundle != "" {
		releases, err = releasesFromBundle(r.bundle, &r.key, cfg)
	} else {
		releases, err = selectReleases(cfg)
	}
	if err != nil || r.registry == "" {
		return releases, err
	}
	reg, err := mirror.ParseRegistry(r.registry)
	if err != nil {
		return nil, err
	}
	for i := range releases {
		if releases[i].Images, err = reg.RelocateSet(releases[i].Images); err != nil {
			return nil, err
		}
	}
	return releases, nil
}

// releasesFromBundle verifies the bundle, loads the selected charts from it
// and checks that it holds every image they run.
func releasesFromBundle(file string, key *keyFlag, cfg *config.Configuration) ([]components.Release, error) {
	cs, err := components.Without(components.Default(), cfg.Skip)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kubevirt-installer-bundle-")
	if err != nil {
		return nil, fmt.Errorf("failed to create a temporary directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	v, err := key.read(file, bundle.ReadOptions{Dir: dir, Want: isChart})
	if err != nil {
		return nil, err
	}
	releases, err := components.LoadFrom(os.DirFS(filepath.Join(dir, bundle.ChartsDir)), cs)
	if err != nil {
		return nil, fmt.Errorf("failed to load the charts of bundle %s: %w", file, err)
	}
	stored := v.Metadata.Refs()
	for _, r := range releases {
		for _, ref := range r.Images.Refs() {
			if !slices.Contains(stored, ref) {
				return nil, fmt.Errorf("bundle %s lacks image %s of %s; create it with this installer version", file, ref, r.Name)
			}
		}
	}
	return releases, nil
}

func isChart(name string) bool {
	return strings.HasPrefix(name, bundle.ChartsDir+"/")
}
