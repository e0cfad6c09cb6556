// Package version tells which build of this project a binary is: the
// version and commit a release build sets with -ldflags -X (see
// pkg/imagebuild), else what the Go toolchain recorded (a plain go build
// in a git checkout records the commit), and the Go version. Every binary
// prints it with --version, and the controllers export it as a
// <program>_build_info metric.
package version

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// Set by a release build:
//
//	-X github.com/kubevirt-kkp/kkp-kubevirt/pkg/version.version=v0.1.0
//	-X github.com/kubevirt-kkp/kkp-kubevirt/pkg/version.commit=<sha>
var (
	version string
	commit  string
)

// Package is the import path of this package, whose variables version and
// commit a release build sets with -ldflags -X.
const Package = "github.com/kubevirt-kkp/kkp-kubevirt/pkg/version"

// Unknown stands for a version or commit nothing recorded.
const Unknown = "unknown"

// Info identifies a build.
type Info struct {
	// Version is the release version, "(devel)" for a build that is none.
	Version string
	// Commit is the git commit built, with "-dirty" when the work tree had
	// changes, or Unknown.
	Commit string
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string
	// Platform is GOOS/GOARCH.
	Platform string
}

// Get returns the build of the running binary.
func Get() Info {
	info := Info{Version: version, Commit: commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info = fromBuildInfo(info, bi)
	}
	if info.Version == "" {
		info.Version = Unknown
	}
	if info.Commit == "" {
		info.Commit = Unknown
	}
	return info
}

// fromBuildInfo fills what -ldflags left empty from what the toolchain
// recorded: the main module's version and the vcs settings.
func fromBuildInfo(info Info, bi *debug.BuildInfo) Info {
	if info.Version == "" {
		info.Version = bi.Main.Version
	}
	if info.Commit != "" {
		return info
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if info.Commit != "" && modified {
		info.Commit += "-dirty"
	}
	return info
}

// String is what --version prints for program.
func (i Info) String() string {
	return fmt.Sprintf("version %s, commit %s, %s %s", i.Version, i.Commit, i.GoVersion, i.Platform)
}

// Line is the --version line of program.
func Line(program string) string {
	return program + " " + Get().String()
}

// Register adds the gauge <namespace>_build_info, always 1, whose labels
// version, commit and goversion say which build runs, to reg. Registering
// it twice in one registry is no error.
func Register(reg prometheus.Registerer, namespace string) error {
	i := Get()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace:   namespace,
		Name:        "build_info",
		Help:        "Always 1; its labels name the version, commit and Go version of the running binary.",
		ConstLabels: prometheus.Labels{"version": i.Version, "commit": i.Commit, "goversion": i.GoVersion},
	})
	g.Set(1)
	err := reg.Register(g)
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to register %s_build_info: %w", namespace, err)
	}
	return nil
}
