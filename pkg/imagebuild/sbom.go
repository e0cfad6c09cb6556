package imagebuild

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"runtime/debug"
	"sort"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle"
)

// Properties of the image SBOM's components, beside the bundle's platform
// and path properties.
const (
	// PropertyGoSum is a module's go.sum hash (h1:...).
	PropertyGoSum = "kkp-kubevirt:go:sum"
	// PropertyGoReplaced is the module path and version a replace
	// directive put this module in place of.
	PropertyGoReplaced = "kkp-kubevirt:go:replaces"
	// PropertyGoSetting is one build setting of a binary, key=value.
	PropertyGoSetting = "kkp-kubevirt:go:setting"
)

// imageSBOM describes b as CycloneDX: the image (bundle.ImageComponent) as
// the subject, one application per platform binary, and the Go modules
// and standard library each binary links, read from the binary's build
// information, with the dependency of each binary on them.
func imageSBOM(o *Options, b *Built) ([]byte, error) {
	platforms := make([]string, 0, len(b.Binaries))
	for p := range b.Binaries {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	subject := bundle.ImageComponent(bundle.ImageEntry{Ref: b.Ref, Digest: b.Digest.String(), Platforms: platforms})
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{
		Timestamp: o.Created.UTC().Format(time.RFC3339),
		Tools:     &cdx.ToolsChoice{Components: &[]cdx.Component{{Type: cdx.ComponentTypeApplication, Name: "kkp-kubevirt imagebuild"}}},
		Component: &subject,
		Licenses:  &cdx.Licenses{{Expression: o.Licenses}},
	}
	modules := map[string]cdx.Component{}
	var binaries []cdx.Component
	var deps []cdx.Dependency
	for _, p := range platforms {
		bin, refs, err := binaryComponents(o, b.Binaries[p], p, modules)
		if err != nil {
			return nil, err
		}
		binaries = append(binaries, bin)
		deps = append(deps, cdx.Dependency{Ref: bin.BOMRef, Dependencies: &refs})
	}
	refs := make([]string, 0, len(modules))
	for ref := range modules {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	components := binaries
	for _, ref := range refs {
		components = append(components, modules[ref])
	}
	bom.Components, bom.Dependencies = &components, &deps
	return bundle.EncodeSBOM(bom)
}

// binaryComponents describes the binary at file, built for platform, and
// adds the modules it links to modules; it returns the binary's component
// and the references of what it links.
func binaryComponents(o *Options, file, platform string, modules map[string]cdx.Component) (cdx.Component, []string, error) {
	info, err := buildinfo.ReadFile(file)
	if err != nil {
		return cdx.Component{}, nil, fmt.Errorf("failed to read the build information of %s: %w", file, err)
	}
	sum, err := fileSHA256(file)
	if err != nil {
		return cdx.Component{}, nil, err
	}
	props := []cdx.Property{{Name: bundle.PropertyPlatform, Value: platform}, {Name: bundle.PropertyPath, Value: "/" + path.Join(BinDir, path.Base(info.Path))}}
	for _, s := range info.Settings {
		props = append(props, cdx.Property{Name: PropertyGoSetting, Value: s.Key + "=" + s.Value})
	}
	bin := cdx.Component{
		BOMRef: "binary:" + platform + ":" + info.Path, Type: cdx.ComponentTypeApplication, Name: path.Base(info.Path), Version: o.Version,
		PackageURL: golangPURL(info.Main.Path, o.Version), Hashes: &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: sum}}, Properties: &props,
	}
	stdlib := cdx.Component{BOMRef: golangPURL("stdlib", info.GoVersion), Type: cdx.ComponentTypeLibrary, Name: "stdlib", Version: info.GoVersion,
		PackageURL: golangPURL("stdlib", info.GoVersion)}
	modules[stdlib.BOMRef] = stdlib
	refs := []string{stdlib.BOMRef}
	for _, m := range info.Deps {
		c := moduleComponent(m)
		modules[c.BOMRef] = c
		refs = append(refs, c.BOMRef)
	}
	sort.Strings(refs)
	return bin, refs, nil
}

// moduleComponent describes one linked module, as replaced.
func moduleComponent(m *debug.Module) cdx.Component {
	used := m
	var props []cdx.Property
	if m.Replace != nil {
		used = m.Replace
		props = append(props, cdx.Property{Name: PropertyGoReplaced, Value: m.Path + "@" + m.Version})
	}
	if used.Sum != "" {
		props = append(props, cdx.Property{Name: PropertyGoSum, Value: used.Sum})
	}
	c := cdx.Component{BOMRef: golangPURL(used.Path, used.Version), Type: cdx.ComponentTypeLibrary, Name: used.Path, Version: used.Version,
		PackageURL: golangPURL(used.Path, used.Version)}
	if len(props) > 0 {
		c.Properties = &props
	}
	return c
}

// golangPURL is pkg:golang/PATH@VERSION, the path's segments escaped.
func golangPURL(modulePath, version string) string {
	return "pkg:golang/" + (&url.URL{Path: modulePath}).EscapedPath() + "@" + url.PathEscape(version)
}

// fileSHA256 is the hex SHA-256 of the file at p.
func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("failed to hash %s: %w", p, err)
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("failed to hash %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
