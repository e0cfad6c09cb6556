package version

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"},
	}}
	if got := fromBuildInfo(Info{}, bi); got.Version != "(devel)" || got.Commit != "abc123-dirty" {
		t.Errorf("without -ldflags: %+v", got)
	}
	if got := fromBuildInfo(Info{Version: "v1.2.3", Commit: "def"}, bi); got.Version != "v1.2.3" || got.Commit != "def" {
		t.Errorf("-ldflags lost to the build info: %+v", got)
	}
}

func TestRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	for range 2 {
		if err := Register(reg, "demo"); err != nil {
			t.Fatal(err)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	i := Get()
	want := map[string]string{"version": i.Version, "commit": i.Commit, "goversion": i.GoVersion}
	if len(families) != 1 || families[0].GetName() != "demo_build_info" || len(families[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v, want one demo_build_info", families)
	}
	m := families[0].GetMetric()[0]
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	if m.GetGauge().GetValue() != 1 || len(got) != len(want) || got["version"] != want["version"] ||
		got["commit"] != want["commit"] || got["goversion"] != want["goversion"] {
		t.Errorf("demo_build_info %v = %v, want %v = 1", got, m.GetGauge().GetValue(), want)
	}
	if line := Line("demo"); !strings.HasPrefix(line, "demo version ") || !strings.Contains(line, i.GoVersion) {
		t.Errorf("--version line %q", line)
	}
}
