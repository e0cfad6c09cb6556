// Command images is make images: it builds this project's controllers into
// reproducible multi-arch OCI images without a container engine (package
// imagebuild), writes them as an OCI layout, packages the charts with the
// images pinned by digest and, with -push, pushes images and charts. The
// kubevirt-installer it builds carries the digests of the controller
// images built in the same run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/kubevirt-kkp/kkp-kubevirt/charts"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagebuild"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/images"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

const module = "github.com/kubevirt-kkp/kkp-kubevirt"

// controllers are the images the installer's table names.
var controllers = []imagebuild.Image{
	{Name: "machine-controller", Package: module + "/cmd/machine-controller", Names: []string{"machine-controller", "webhook"}},
	{Name: "infra-controller", Package: module + "/cmd/infra-controller", Names: []string{"infra-controller"}},
}

type flags struct {
	out, chartsOut, releaseOut string
	registry, version, key     string
	source, licenses           string
	push, plainHTTP            bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	f := flags{}
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	fs.StringVar(&f.out, "o", "bin/images", "OCI layout to write (replaced)")
	fs.StringVar(&f.chartsOut, "charts", "bin/charts", "directory for the packaged charts")
	fs.StringVar(&f.releaseOut, "release", "bin/release", "directory for the static kubevirt-installer binaries, one per platform")
	fs.StringVar(&f.registry, "registry", images.DefaultRepository, "repository the images are named (and with -push pushed) under; charts go to REGISTRY/charts")
	fs.StringVar(&f.version, "version", "v0.1.0", "version: the images' tag and what --version prints; the installer's table names this version")
	fs.StringVar(&f.key, "signing-key", "", "cosign.key (password from COSIGN_PASSWORD) or PEM private key to sign the images with")
	fs.StringVar(&f.source, "source", "https://github.com/kubevirt-kkp/kkp-kubevirt", "org.opencontainers.image.source")
	fs.StringVar(&f.licenses, "licenses", "NOASSERTION", "org.opencontainers.image.licenses (SPDX expression)")
	fs.BoolVar(&f.push, "push", false, "push the images and charts to -registry")
	fs.BoolVar(&f.plainHTTP, "plain-http", false, "push charts over HTTP (images to loopback always are)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o, err := f.options(ctx)
	if err != nil {
		return err
	}
	// The binaries stay until the installers are copied out of them.
	if o.WorkDir, err = os.MkdirTemp("", "images-"); err != nil {
		return fmt.Errorf("failed to create a work directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(o.WorkDir) }()
	start := time.Now()
	built, err := buildAll(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "built %d images for %d platforms in %s (commit %s, %s)\n", len(built), len(imagebuild.Platforms),
		time.Since(start).Round(time.Second), o.Commit, o.Created.UTC().Format(time.RFC3339))
	if err := report(out, built); err != nil {
		return err
	}
	return f.write(ctx, out, o, built)
}

// buildAll builds the controllers, then the installer with their digests.
func buildAll(ctx context.Context, o imagebuild.Options) ([]imagebuild.Built, error) {
	built, err := imagebuild.Build(ctx, o, controllers)
	if err != nil {
		return nil, err
	}
	installer := imagebuild.Image{Name: "kubevirt-installer", Package: module + "/cmd/kubevirt-installer", Names: []string{"kubevirt-installer"},
		X: map[string]string{images.RepositoryVar: o.Repository, images.DigestsVar: images.DigestsValue(digests(built))}}
	o.WorkDir = filepath.Join(o.WorkDir, "installer")
	more, err := imagebuild.Build(ctx, o, []imagebuild.Image{installer})
	if err != nil {
		return nil, err
	}
	return append(built, more...), nil
}

// digests are the index digests of built by image name.
func digests(built []imagebuild.Built) map[string]string {
	out := map[string]string{}
	for _, b := range built {
		out[imageName(b.Ref)] = b.Digest.String()
	}
	return out
}

func imageName(ref string) string {
	r, err := name.ParseReference(ref)
	if err != nil {
		return ref
	}
	return filepath.Base(r.Context().RepositoryStr())
}

// write writes the layout, the charts and the installer binaries, and
// pushes with -push.
func (f *flags) write(ctx context.Context, out io.Writer, o imagebuild.Options, built []imagebuild.Built) error {
	if err := imagebuild.WriteLayout(f.out, built); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\n", f.out)
	pins := map[string]map[string]string{}
	for _, b := range built[:len(controllers)] {
		n := imageName(b.Ref)
		pins[n] = map[string]string{images.DefaultRepository + "/" + n + ":" + o.Version: b.Ref + "@" + b.Digest.String()}
	}
	files, err := imagebuild.PackageCharts(charts.FS, pins, f.chartsOut)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "packaged %s\n", strings.Join(files, ", "))
	if err := copyInstallers(built[len(built)-1], f.releaseOut); err != nil {
		return err
	}
	if !f.push {
		return nil
	}
	reg, err := mirror.ParseRegistry(f.registry)
	if err != nil {
		return err
	}
	if err := imagebuild.Push(ctx, built, mirror.Registry{Host: reg.Host}, mirror.Options{Progress: out}); err != nil {
		return err
	}
	refs, err := imagebuild.PushCharts(files, f.registry+"/charts", o.Created, f.plainHTTP)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "pushed charts %s\n", strings.Join(refs, ", "))
	return nil
}

// report prints each image's reference with its digest and size.
func report(out io.Writer, built []imagebuild.Built) error {
	for _, b := range built {
		sizes, err := imagebuild.Sizes(b)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s@%s %s\n", b.Ref, b.Digest, sizes)
	}
	return nil
}

// copyInstallers copies the static kubevirt-installer binaries to dir as
// kubevirt-installer-<os>-<arch>.
func copyInstallers(b imagebuild.Built, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("failed to create %s: %w", dir, err)
	}
	for platform, file := range b.Binaries {
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("failed to read %s: %w", file, err)
		}
		dst := filepath.Join(dir, "kubevirt-installer-"+strings.ReplaceAll(platform, "/", "-"))
		if err := os.WriteFile(dst, data, 0o755); err != nil {
			return fmt.Errorf("failed to write %s: %w", dst, err)
		}
	}
	return nil
}

// options are the build's options: commit and time from git, or
// SOURCE_DATE_EPOCH.
func (f *flags) options(ctx context.Context) (imagebuild.Options, error) {
	dir, err := os.Getwd()
	if err != nil {
		return imagebuild.Options{}, fmt.Errorf("failed to find the module: %w", err)
	}
	commit, created, err := gitCommit(ctx, dir)
	if err != nil {
		return imagebuild.Options{}, err
	}
	var signer signature.Signer
	if f.key != "" {
		var password []byte
		if p, ok := os.LookupEnv("COSIGN_PASSWORD"); ok {
			password = []byte(p)
		}
		if signer, err = bundle.LoadSigner(f.key, password); err != nil {
			return imagebuild.Options{}, fmt.Errorf("%w (the password of a cosign key comes from COSIGN_PASSWORD)", err)
		}
	}
	return imagebuild.Options{
		ModuleDir: dir, Repository: strings.TrimSuffix(f.registry, "/"), Version: f.version, Commit: commit, Created: created,
		Source: f.source, Licenses: f.licenses, Signer: signer,
	}, nil
}

// gitCommit returns HEAD, with -dirty when tracked files changed, and its
// commit time, or SOURCE_DATE_EPOCH when set.
func gitCommit(ctx context.Context, dir string) (string, time.Time, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		b, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("failed to run git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	commit, err := git("rev-parse", "HEAD")
	if err != nil {
		return "", time.Time{}, err
	}
	if status, err := git("status", "--porcelain", "--untracked-files=no"); err != nil {
		return "", time.Time{}, err
	} else if status != "" {
		commit += "-dirty"
	}
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		if epoch, err = git("log", "-1", "--format=%ct"); err != nil {
			return "", time.Time{}, err
		}
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970: %w", epoch, err)
	}
	return commit, time.Unix(secs, 0).UTC(), nil
}
