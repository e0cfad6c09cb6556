package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/charts"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

func newBundleCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Create, verify and push offline bundles for air-gapped clusters",
		Long: `An offline bundle is one tar file with the installer's charts and every image
the installation runs (operator-deployed images included), stored once per
blob in an OCI image layout, with the sha256 of every file in checksums.txt,
a CycloneDX SBOM and, when signed, a cosign-compatible signature of
checksums.txt. Create it on a connected host, carry it over, verify it, push
its images to the private registry and install with --bundle and --registry;
each of these takes --key to refuse a bundle not signed with that key.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newBundleCreateCommand(g), newBundleVerifyCommand(g), newBundlePushCommand(g),
		newBundleSignCommand(g), newBundleInspectCommand(g))
	return cmd
}

// bundleCreateOptions are the options of bundle create.
type bundleCreateOptions struct {
	*globalOptions
	transfer    transferFlags
	output      string
	workDir     string
	compression string
	skip        []string
	keepWorkDir bool
	signingKey  string
	platforms   []string
	referrers   bool
	layout      string
}

func newBundleCreateCommand(g *globalOptions) *cobra.Command {
	o := &bundleCreateOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "create -o FILE",
		Short: "Download the charts' images into an offline bundle",
		Long: `create writes the charts and every image of ` + "`kubevirt-installer images`" + ` to
FILE. It assembles the bundle in a work directory (FILE.work unless
--work-dir is given); an interrupted create resumes there, skipping every
blob already downloaded. The default work directory is removed after success
unless --keep-work-dir is set; one given with --work-dir is kept. A FILE ending in .zst is zstd-compressed, one
ending in .gz or .tgz gzip-compressed (or choose with --compression).
--signing-key signs checksums.txt, which lists every other file, into
checksums.txt.sig (see bundle sign).

--platform (repeatable or comma-separated, default linux/amd64) chooses the
platforms of multi-platform images. With every platform of an image index
chosen the index is stored byte for byte; with some, a filtered index of the
chosen manifests is stored, which has a digest of its own (bundle.json keeps
the upstream one). A single-platform image for a platform not chosen is an
error. The signatures, attestations and SBOMs attached to each image, as
cosign tags (sha256-<hex>.sig, .att, .sbom) or OCI referrers, are stored
with it unless --referrers=false.

--images-layout takes the images it holds (make images writes bin/images:
this project's controllers with their SBOMs and signatures) from that OCI
layout instead of a registry; an image referenced by digest, as a release
build pins ours, is stored whole, every platform, so its digest and
signature hold.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "bundle file to write")
	f.StringVar(&o.workDir, "work-dir", "", "directory the bundle is assembled in, kept after success (default FILE.work, removed after success)")
	f.StringVar(&o.compression, "compression", "", "none, gzip or zstd (default: zstd for FILE.zst, gzip for FILE.gz or .tgz, else none)")
	f.BoolVar(&o.keepWorkDir, "keep-work-dir", false, "keep the work directory after success")
	f.StringSliceVar(&o.skip, "skip", nil, "components whose images to leave out: cni-plugins, multus, kubevirt, cdi")
	f.StringVar(&o.signingKey, "signing-key", "", "private key to sign the bundle with: cosign.key (password from "+passwordEnv+") or a PEM private key")
	f.StringSliceVar(&o.platforms, "platform", []string{bundle.DefaultPlatform},
		"platforms to store of each multi-platform image, os/architecture[/variant]; repeatable or comma-separated")
	f.BoolVar(&o.referrers, "referrers", true,
		"store the signatures, attestations and SBOMs attached to each image (cosign tags and OCI referrers)")
	f.StringVar(&o.layout, "images-layout", "", "OCI layout (make images writes bin/images) to take the images it holds from")
	_ = cmd.MarkFlagRequired("output")
	o.transfer.bind(f, false)
	o.transfer.bindPullMirrors(f)
	return cmd
}

// Run creates the bundle.
func (o *bundleCreateOptions) Run(ctx context.Context) error {
	if _, err := bundle.ParsePlatforms(o.platforms); err != nil {
		return fmt.Errorf("invalid --platform: %w", err)
	}
	cs, err := components.Without(components.Default(), o.skip)
	if err != nil {
		return err
	}
	var signer signature.Signer
	if o.signingKey != "" {
		if signer, err = loadSigningKey(o.signingKey); err != nil {
			return err
		}
	}
	compression := bundle.CompressionFor(o.output)
	if o.compression != "" {
		if compression, err = bundle.ParseCompression(o.compression); err != nil {
			return err
		}
	}
	releases, err := components.Load(cs)
	if err != nil {
		return err
	}
	opts, err := o.transfer.options(o.globalOptions)
	if err != nil {
		return err
	}
	mirrors, err := o.transfer.mirrors()
	if err != nil {
		return err
	}
	local, refs, err := o.layoutImages(installer.Images(releases))
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "pulling %d images\n", len(refs))
	items, err := bundle.Pull(ctx, refs, mirrors, bundle.PullOptions{Transfer: opts, Referrers: o.referrers})
	if err != nil {
		return err
	}
	items = append(items, local...)
	workDir := o.workDir
	if workDir == "" {
		workDir = o.output + ".work"
	}
	res, err := bundle.Create(ctx, bundle.CreateOptions{
		Output: o.output, WorkDir: workDir, Charts: charts.FS, Images: items, Progress: o.out,
		Compression: compression, Signer: signer,
		Platforms: o.platforms,
	})
	if err != nil {
		return err
	}
	if !o.keepWorkDir && o.workDir == "" {
		if err := os.RemoveAll(workDir); err != nil {
			return fmt.Errorf("failed to remove the work directory: %w", err)
		}
	}
	if res.Signed {
		fmt.Fprintf(o.out, "signed with %s\n", o.signingKey)
	}
	fmt.Fprintf(o.out, "aggregate checksum: %s\n", res.Checksum)
	return nil
}

// bundleVerifyOptions are the options of bundle verify.
type bundleVerifyOptions struct {
	*globalOptions
	checksum string
	key      keyFlag
}

func newBundleVerifyCommand(g *globalOptions) *cobra.Command {
	o := &bundleVerifyOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "verify FILE",
		Short: "Check every file of a bundle against its checksums",
		Long: `verify reads the bundle once and refuses it, naming the files, when a file was
changed, is missing or is not listed in checksums.txt. --checksum compares
the aggregate checksum with the one create printed, which also catches a
rewritten checksums.txt. --key checks the signature of checksums.txt with a
public key first and refuses an unsigned bundle or a signature the key did
not make; without --key a signature is reported but not checked.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.Run(cmd.Context(), args[0]) },
	}
	cmd.Flags().StringVar(&o.checksum, "checksum", "", "expected aggregate checksum (sha256:...), as bundle create printed it")
	o.key.bind(cmd.Flags())
	return cmd
}

// Run verifies the bundle.
func (o *bundleVerifyOptions) Run(_ context.Context, file string) error {
	v, err := o.key.read(file, bundle.ReadOptions{})
	if err != nil {
		return err
	}
	if o.checksum != "" && o.checksum != v.Checksum {
		return fmt.Errorf("bundle %s has aggregate checksum %s, want %s", file, v.Checksum, o.checksum)
	}
	fmt.Fprintf(o.out, "%s: verified %d files, %d images for %s, aggregate checksum %s, %s\n",
		file, v.Files, len(v.Metadata.Images), strings.Join(v.Metadata.Platforms, ","), v.Checksum, signatureState(v, o.key.file))
	return nil
}

// bundlePushOptions are the options of bundle push.
type bundlePushOptions struct {
	*globalOptions
	transfer transferFlags
	registry string
	workDir  string
	key      keyFlag
}

func newBundlePushCommand(g *globalOptions) *cobra.Command {
	o := &bundlePushOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "push FILE --registry HOST[:PORT][/PATH]",
		Short: "Verify a bundle and copy its images into a private registry",
		Long: `push verifies the bundle while unpacking it to a temporary directory, then
copies every image to the registry under its upstream repository path and
tag (quay.io/kubevirt/virt-api:v1.9.0 goes to HOST/PATH/kubevirt/virt-api:v1.9.0),
several at a time, retrying transient errors and skipping blobs the registry
already has. An image index is pushed as it is stored, so the registry
reports the digest bundle.json records; each image's signatures,
attestations and SBOMs follow it, under their cosign tags or as OCI
referrers of their subject. Credentials come from the Docker config (docker login). With
--key, a bundle not signed with that key is refused before any image is read.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.Run(cmd.Context(), args[0]) },
	}
	cmd.Flags().StringVar(&o.registry, "registry", "", "private registry HOST[:PORT][/PATH] to push to")
	cmd.Flags().StringVar(&o.workDir, "work-dir", "", "directory to unpack the bundle in (default: a temporary directory)")
	_ = cmd.MarkFlagRequired("registry")
	o.key.bind(cmd.Flags())
	o.transfer.bind(cmd.Flags(), false)
	return cmd
}

// Run pushes the bundle's images.
func (o *bundlePushOptions) Run(ctx context.Context, file string) error {
	reg, err := mirror.ParseRegistry(o.registry)
	if err != nil {
		return err
	}
	opts, err := o.transfer.options(o.globalOptions)
	if err != nil {
		return err
	}
	dir := o.workDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "kubevirt-installer-push-"); err != nil {
			return fmt.Errorf("failed to create a temporary directory: %w", err)
		}
		defer func() { _ = os.RemoveAll(dir) }()
	}
	v, err := o.key.read(file, bundle.ReadOptions{Dir: dir})
	if err != nil {
		return err
	}
	items, err := bundle.Images(dir)
	if err != nil {
		return err
	}
	if err := mirror.Copy(ctx, items, reg, opts); err != nil {
		return err
	}
	referrers := 0
	for _, item := range items {
		referrers += len(item.Referrers)
	}
	fmt.Fprintf(o.out, "pushed %d images and %d referrers of %s (checksum %s, %s) to %s\n",
		len(items), referrers, file, v.Checksum, signatureState(v, o.key.file), reg)
	return nil
}

// layoutImages takes the images of refs that --images-layout holds from it,
// without their referrers under --referrers=false, and returns them and
// the refs left to pull.
func (o *bundleCreateOptions) layoutImages(refs []string) ([]mirror.Item, []string, error) {
	if o.layout == "" {
		return nil, refs, nil
	}
	local, rest, err := bundle.FromLayout(o.layout, refs)
	if err != nil {
		return nil, nil, err
	}
	if !o.referrers {
		for i := range local {
			local[i].Referrers = nil
		}
	}
	fmt.Fprintf(o.out, "taking %d images from %s\n", len(local), o.layout)
	return local, rest, nil
}
