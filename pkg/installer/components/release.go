package components

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/kubevirt-kkp/kkp-kubevirt/charts"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/images"
)

// ImagesValue is the chart value that carries a component's images; it is
// filled from the pinned image table and cannot be set by users.
const ImagesValue = "images"

// Release is a component together with its chart and pinned images: what
// the installer installs as one Helm release.
type Release struct {
	Component
	// Chart is the loaded chart.
	Chart *chart.Chart
	// Images are the component's pinned images.
	Images images.Set
}

// Load loads the embedded chart and the pinned images of every component.
func Load(cs []Component) ([]Release, error) {
	return LoadFrom(charts.FS, cs)
}

// LoadFrom is Load with the charts taken from fsys, which holds one
// directory per chart.
func LoadFrom(fsys fs.FS, cs []Component) ([]Release, error) {
	releases := make([]Release, 0, len(cs))
	for _, c := range cs {
		ch, err := LoadChart(fsys, c.Chart)
		if err != nil {
			return nil, err
		}
		if ch.Metadata.AppVersion != c.Version {
			return nil, fmt.Errorf("chart %s has appVersion %q, component %s pins %q",
				c.Chart, ch.Metadata.AppVersion, c.Name, c.Version)
		}
		set, err := images.Pinned(c.Name, c.Version)
		if err != nil {
			return nil, err
		}
		releases = append(releases, Release{Component: c, Chart: ch, Images: set})
	}
	return releases, nil
}

// LoadChart loads the chart in directory dir of fsys.
func LoadChart(fsys fs.FS, dir string) (*chart.Chart, error) {
	var files []*loader.BufferedFile
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: strings.TrimPrefix(p, path.Clean(dir)+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed to read chart %s: %w", dir, err)
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("failed to load chart %s: %w", dir, err)
	}
	return ch, nil
}

// Values returns the values the release is installed with: the user's values
// plus the pinned images. A user value for the images is an error: images
// are pinned per version.
func (r Release) Values(user map[string]any) (map[string]any, error) {
	if _, ok := user[ImagesValue]; ok {
		return nil, fmt.Errorf("%s: the %s value cannot be set: images are pinned per version", r.Name, ImagesValue)
	}
	values := make(map[string]any, len(user)+1)
	for k, v := range user {
		values[k] = v
	}
	values[ImagesValue] = r.Images.Values()
	return values, nil
}

// Find returns the release named name.
func Find(releases []Release, name string) (Release, bool) {
	for _, r := range releases {
		if r.Name == name {
			return r, true
		}
	}
	return Release{}, false
}
