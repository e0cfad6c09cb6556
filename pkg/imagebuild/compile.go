package imagebuild

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/version"
)

// compileEnv are the variables every build sets, so that what the
// environment of the machine holds does not change the binaries: static
// binaries for the baseline of each architecture.
var compileEnv = []string{"CGO_ENABLED=0", "GOAMD64=v1", "GOARM64=v8.0", "GOFLAGS=-mod=readonly", "GOEXPERIMENT="}

// compile builds packages (import paths of main packages) for platform into
// dir, one binary per package named after its last path element, and
// returns their paths by package. x are -ldflags -X settings (import
// path.name=value) on top of the version and commit.
func compile(ctx context.Context, o *Options, packages []string, platform v1.Platform, dir string, x map[string]string) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("failed to create the build directory: %w", err)
	}
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=" + ldflags(o, x), "-o", dir + string(filepath.Separator)}
	cmd := exec.CommandContext(ctx, o.goCommand(), append(args, packages...)...)
	cmd.Dir = o.ModuleDir
	cmd.Env = append(append(os.Environ(), compileEnv...), "GOOS="+platform.OS, "GOARCH="+platform.Architecture)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("failed to build %s for %s: %w: %s", strings.Join(packages, " "), platform, err, bytes.TrimSpace(out.Bytes()))
	}
	bins := make(map[string]string, len(packages))
	for _, p := range packages {
		bins[p] = filepath.Join(dir, path.Base(p))
		if _, err := os.Stat(bins[p]); err != nil {
			return nil, fmt.Errorf("the build of %s for %s wrote no binary: %w", p, platform, err)
		}
	}
	return bins, nil
}

// ldflags strips the symbol table and DWARF, empties the build ID and sets
// the version, the commit and x, sorted so the command line is stable.
func ldflags(o *Options, x map[string]string) string {
	flags := []string{"-s", "-w", "-buildid="}
	settings := []string{version.Package + ".version=" + o.Version, version.Package + ".commit=" + o.Commit}
	for k, v := range x {
		settings = append(settings, k+"="+v)
	}
	sort.Strings(settings[2:])
	for _, s := range settings {
		flags = append(flags, "-X", s)
	}
	return strings.Join(flags, " ")
}
