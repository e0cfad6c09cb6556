package main

import (
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
	f.IntVar(&t.jobs, "jobs", mirror.DefaultJobs, "images transferred at a time")
	f.IntVar(&t.attempts, "attempts", mirror.DefaultAttempts, "tries per image before giving up")
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

// options returns the mirror options the flags describe.
func (t *transferFlags) options(g *globalOptions) (mirror.Options, error) {
	opts := mirror.Options{Jobs: t.jobs, Attempts: t.attempts, PlainHTTP: t.plainHTTP, Progress: g.out}
	if t.platform != "" {
		osName, arch, ok := strings.Cut(t.platform, "/")
		if !ok || osName == "" || arch == "" {
			return mirror.Options{}, fmt.Errorf("platform %q is not os/architecture", t.platform)
		}
		opts.Platform = &v1.Platform{OS: osName, Architecture: arch}
	}
	return opts, nil
}

// mirrors returns the pull mirrors the flags name.
func (t *transferFlags) mirrors() (mirror.Mirrors, error) {
	return mirror.ParseMirrors(t.pullMirrors)
}
