package imagebuild

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

// PackageCharts packages each chart directory of fsys named in pins, as
// helm package does, into dir, with every image reference of pins (from
// the default to the pinned one) replaced in its values.yaml: the charts
// of a release run the images of that release by digest. It returns the
// packaged files.
func PackageCharts(fsys fs.FS, pins map[string]map[string]string, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("failed to create %s: %w", dir, err)
	}
	var files []string
	for _, name := range sortedKeys(pins) {
		ch, err := components.LoadChart(fsys, name)
		if err != nil {
			return nil, err
		}
		if err := pinValues(ch, pins[name]); err != nil {
			return nil, fmt.Errorf("chart %s: %w", name, err)
		}
		file, err := chartutil.Save(ch, dir)
		if err != nil {
			return nil, fmt.Errorf("failed to package chart %s: %w", name, err)
		}
		files = append(files, file)
	}
	return files, nil
}

// pinValues replaces each old reference of pins with the new one in the
// chart's values.yaml, keeping its comments, and in its parsed values.
func pinValues(ch *chart.Chart, pins map[string]string) error {
	for _, f := range ch.Raw {
		if f.Name != chartutil.ValuesfileName {
			continue
		}
		for _, old := range sortedKeys(pins) {
			if !bytes.Contains(f.Data, []byte(old)) {
				return fmt.Errorf("%s does not reference %s", chartutil.ValuesfileName, old)
			}
			f.Data = bytes.ReplaceAll(f.Data, []byte(old), []byte(pins[old]))
		}
		values, err := chartutil.ReadValues(f.Data)
		if err != nil {
			return fmt.Errorf("failed to parse the pinned %s: %w", chartutil.ValuesfileName, err)
		}
		ch.Values = values
		return nil
	}
	return fmt.Errorf("the chart has no %s", chartutil.ValuesfileName)
}

// PushCharts pushes packaged charts with Helm's registry client to
// oci://repository/<chart>:<version>, as helm push does, with created as
// the manifest's creation time. plainHTTP talks HTTP, as helm push
// --plain-http.
func PushCharts(files []string, repository string, created time.Time, plainHTTP bool) ([]string, error) {
	var opts []registry.ClientOption
	if plainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("failed to create Helm's registry client: %w", err)
	}
	var refs []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("failed to read chart %s: %w", file, err)
		}
		meta, err := chartMetadata(file)
		if err != nil {
			return nil, err
		}
		ref := strings.TrimPrefix(repository, "oci://") + "/" + meta.Name + ":" + meta.Version
		res, err := client.Push(data, ref, registry.PushOptStrictMode(true), registry.PushOptCreationTime(created.UTC().Format(time.RFC3339)))
		if err != nil {
			return nil, fmt.Errorf("failed to push chart %s to %s: %w", filepath.Base(file), ref, err)
		}
		refs = append(refs, "oci://"+ref+"@"+res.Manifest.Digest)
	}
	return refs, nil
}

// chartMetadata reads the Chart.yaml of a packaged chart.
func chartMetadata(file string) (*chart.Metadata, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("failed to read chart %s: %w", file, err)
	}
	defer func() { _ = f.Close() }()
	ch, err := loader.LoadArchive(f)
	if err != nil {
		return nil, fmt.Errorf("failed to load chart %s: %w", file, err)
	}
	return ch.Metadata, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
