package imagebuild

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/signature"
)

// OCI annotation and label keys the images carry.
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelRevision = "org.opencontainers.image.revision"
	LabelVersion  = "org.opencontainers.image.version"
	LabelLicenses = "org.opencontainers.image.licenses"
	LabelCreated  = "org.opencontainers.image.created"
	LabelTitle    = "org.opencontainers.image.title"
)

// Platforms are the platforms every image is built for.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// Image is one image to build: the binary of a main package under one or
// more names in /usr/local/bin, the first its entrypoint.
type Image struct {
	// Name is the image's repository name under Options.Repository.
	Name string
	// Package is the import path of the main package.
	Package string
	// Names are the names of the binary in BinDir; the first is a file
	// and the entrypoint, the others hard links to it.
	Names []string
	// X are -ldflags -X settings of this image's binary (path.name=value).
	X map[string]string
}

// Options are what every image of a build shares.
type Options struct {
	// ModuleDir is the root of the Go module to build from.
	ModuleDir string
	// Repository is where the images are named, e.g. ghcr.io/kubevirt-kkp.
	Repository string
	// Version tags the images and is what --version prints.
	Version string
	// Commit is the git commit built (with -dirty for a changed tree).
	Commit string
	// Created is the commit time: every file, config and SBOM time.
	Created time.Time
	// Source is the URL of the source repository, Licenses its SPDX
	// license expression.
	Source, Licenses string
	// Platforms to build; none is Platforms.
	Platforms []v1.Platform
	// WorkDir holds the binaries; empty is a temporary directory that
	// Build removes before it returns.
	WorkDir string
	// Signer signs each image index as cosign sign does; nil leaves them
	// unsigned.
	Signer signature.Signer
	// Go is the go command; empty is "go".
	Go string
}

func (o *Options) goCommand() string {
	if o.Go == "" {
		return "go"
	}
	return o.Go
}

// Built is one built image.
type Built struct {
	// Ref is the image's reference: Repository/Name:Version.
	Ref string
	// Index is the image index of every platform.
	Index v1.ImageIndex
	// Digest is the index's digest.
	Digest v1.Hash
	// Binaries are the built binaries by platform (os/arch), in
	// Options.WorkDir.
	Binaries map[string]string
	// Referrers are the SBOM and, when signed, the signature, each under
	// the reference it is stored and pushed under.
	Referrers []Referrer
}

// Referrer is a manifest attached to an image.
type Referrer struct {
	// Ref is a cosign tag (repo:sha256-<hex>.sig) or repo@digest.
	Ref   string
	Image v1.Image
}

// Build compiles the images' binaries for every platform, one go build
// per platform, and assembles their images, SBOMs and signatures.
func Build(ctx context.Context, o Options, images []Image) ([]Built, error) {
	if len(o.Platforms) == 0 {
		o.Platforms = Platforms
	}
	if o.WorkDir == "" {
		dir, err := os.MkdirTemp("", "imagebuild-")
		if err != nil {
			return nil, fmt.Errorf("failed to create a work directory: %w", err)
		}
		defer func() { _ = os.RemoveAll(dir) }()
		o.WorkDir = dir
	}
	bins, err := compileAll(ctx, &o, images)
	if err != nil {
		return nil, err
	}
	base, err := layer(baseEntries(), o.Created)
	if err != nil {
		return nil, err
	}
	out := make([]Built, 0, len(images))
	for _, img := range images {
		b, err := assemble(&o, img, base, bins)
		if err != nil {
			return nil, fmt.Errorf("failed to build image %s: %w", img.Name, err)
		}
		out = append(out, *b)
	}
	return out, nil
}

// compileAll builds every image's binary for every platform: images with
// the same -X settings share one go build per platform. It returns the
// binaries by platform and package.
func compileAll(ctx context.Context, o *Options, images []Image) (map[string]map[string]string, error) {
	bins := map[string]map[string]string{}
	for _, p := range o.Platforms {
		bins[p.String()] = map[string]string{}
		groups := map[string][]string{}
		xs := map[string]map[string]string{}
		for _, img := range images {
			key := fmt.Sprint(img.X)
			groups[key], xs[key] = append(groups[key], img.Package), img.X
		}
		keys := make([]string, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			dir := filepath.Join(o.WorkDir, p.OS+"-"+p.Architecture, fmt.Sprint(i))
			got, err := compile(ctx, o, groups[k], p, dir, xs[k])
			if err != nil {
				return nil, err
			}
			for pkg, file := range got {
				bins[p.String()][pkg] = file
			}
		}
	}
	return bins, nil
}

// assemble builds the index of img from its binaries.
func assemble(o *Options, img Image, base v1.Layer, bins map[string]map[string]string) (*Built, error) {
	ref := o.Repository + "/" + img.Name + ":" + o.Version
	if _, err := name.NewTag(ref, name.StrictValidation); err != nil {
		return nil, fmt.Errorf("failed to name the image: %w", err)
	}
	b := &Built{Ref: ref, Binaries: map[string]string{}}
	var adds []mutate.IndexAddendum
	for _, p := range o.Platforms {
		file := bins[p.String()][img.Package]
		b.Binaries[p.String()] = file
		image, err := platformImage(o, img, p, base, file)
		if err != nil {
			return nil, fmt.Errorf("failed to build the %s image: %w", p, err)
		}
		platform := p
		adds = append(adds, mutate.IndexAddendum{Add: image, Descriptor: v1.Descriptor{Platform: &platform}})
	}
	idx := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)
	b.Index = mutate.Annotations(idx, o.annotations()).(v1.ImageIndex)
	digest, err := b.Index.Digest()
	if err != nil {
		return nil, fmt.Errorf("failed to hash the index: %w", err)
	}
	b.Digest = digest
	if err := attach(o, b); err != nil {
		return nil, err
	}
	return b, nil
}

// annotations are the OCI labels of every image, also the annotations of
// its index.
func (o *Options) annotations() map[string]string {
	return map[string]string{
		LabelSource: o.Source, LabelRevision: o.Commit, LabelVersion: o.Version,
		LabelLicenses: o.Licenses, LabelCreated: o.Created.UTC().Format(time.RFC3339),
	}
}

// platformImage is the image of one platform: the base layer, the binary
// layer and a config that runs the binary as nobody.
func platformImage(o *Options, img Image, p v1.Platform, base v1.Layer, file string) (v1.Image, error) {
	entries, err := binaryEntries(file, img.Names)
	if err != nil {
		return nil, err
	}
	bin, err := layer(entries, o.Created)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: o.Created.UTC()}
	image := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	image = mutate.ConfigMediaType(image, types.OCIConfigJSON)
	image, err = mutate.Append(image,
		mutate.Addendum{Layer: base, History: v1.History{Created: created, CreatedBy: "imagebuild: CA certificates, /etc/passwd, /etc/group"}, MediaType: types.OCILayer},
		mutate.Addendum{Layer: bin, History: v1.History{Created: created, CreatedBy: "imagebuild: " + img.Package}, MediaType: types.OCILayer})
	if err != nil {
		return nil, fmt.Errorf("failed to add the layers: %w", err)
	}
	cfg, err := image.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("failed to read the config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = p.OS, p.Architecture, p.Variant
	cfg.Created = created
	cfg.Config = v1.Config{
		Entrypoint: []string{"/" + path.Join(BinDir, img.Names[0])},
		User:       fmt.Sprintf("%d:%d", Nobody, Nobody),
		WorkingDir: "/",
		Env:        []string{"PATH=/" + BinDir + ":/usr/bin:/bin"},
		Labels:     o.annotations(),
	}
	image, err = mutate.ConfigFile(image, cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to set the config: %w", err)
	}
	return image, nil
}
