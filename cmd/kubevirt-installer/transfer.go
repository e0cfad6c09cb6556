package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// transferFlags tune image transfers from and to registries.
type transferFlags struct {
	platform    string
	pullMirrors map[string]string
	jobs        int
	attempts    int
	plainHTTP   bool
}

func (t *transferFlags) bind(f *pflag.FlagSet, pull bool) {
	f.IntVar(&t.jobs, "jobs", mirror.DefaultJobs, fmt.Sprintf("images transferred at a time, 1 to %d", mirror.MaxJobs))
	f.IntVar(&t.attempts, "attempts", mirror.DefaultAttempts,
		fmt.Sprintf("tries per image before giving up, 1 to %d (the wait between two doubles up to %s)", mirror.MaxAttempts, mirror.MaxBackoff))
	f.BoolVar(&t.plainHTTP, "plain-http", false, "talk HTTP instead of HTTPS to --registry (loopback and private addresses always use HTTP)")
	if pull {
		f.StringVar(&t.platform, "platform", "linux/amd64", "platform whose images are pulled, as os/architecture")
		t.bindPullMirrors(f)
	}
}

// bindPullMirrors binds --pull-mirror.
func (t *transferFlags) bindPullMirrors(f *pflag.FlagSet) {
	f.StringToStringVar(&t.pullMirrors, "pull-mirror", nil,
		"pull the images of an upstream registry from another one, e.g. quay.io=cache.local/quay (a pull-through cache)")
}

// options returns the mirror options the flags describe. --jobs and
// --attempts must be in their ranges; 0, the default of mirror.Options,
// is a mistake on the command line.
func (t *transferFlags) options(g *globalOptions) (mirror.Options, error) {
	opts := mirror.Options{Jobs: t.jobs, Attempts: t.attempts, PlainHTTP: t.plainHTTP, Progress: g.out}
	if err := errors.Join(count("jobs", t.jobs, mirror.MaxJobs), count("attempts", t.attempts, mirror.MaxAttempts)); err != nil {
		return mirror.Options{}, err
	}
	if t.platform != "" {
		osName, arch, ok := strings.Cut(t.platform, "/")
		if !ok || osName == "" || arch == "" {
			return mirror.Options{}, fmt.Errorf("platform %q is not os/architecture", t.platform)
		}
		opts.Platform = &v1.Platform{OS: osName, Architecture: arch}
	}
	return opts, nil
}

// count refuses a count flag out of 1 to maxValue.
func count(name string, value, maxValue int) error {
	if value < 1 || value > maxValue {
		return fmt.Errorf("--%s %d: must be between 1 and %d", name, value, maxValue)
	}
	return nil
}

// mirrors returns the pull mirrors the flags name.
func (t *transferFlags) mirrors() (mirror.Mirrors, error) {
	return mirror.ParseMirrors(t.pullMirrors)
}
