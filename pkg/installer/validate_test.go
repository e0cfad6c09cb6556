package installer

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// TestValidateReportsEveryProblemOfEveryComponent: each problem names its
// component, the value's path and what is allowed, and the problems of all
// components come at once.
func TestValidateReportsEveryProblemOfEveryComponent(t *testing.T) {
	releases := defaultReleases(t)
	tests := []struct {
		name   string
		values map[string]map[string]any
		want   []string
	}{
		{
			name: "bad values in two components",
			values: map[string]map[string]any{
				"kubevirt": {"uninstallStrategy": "Foo"},
				"cdi":      {"uninstallStrategy": "Bar"},
			},
			want: []string{
				"kubevirt: the values do not match the chart's values.schema.json:\n- at '/uninstallStrategy': value must be one of 'RemoveWorkloads', 'BlockUninstallIfWorkloadsExist'",
				"cdi: the values do not match the chart's values.schema.json:\n- at '/uninstallStrategy': value must be one of 'RemoveWorkloads', 'BlockUninstallIfWorkloadsExist'",
			},
		},
		{
			name: "two problems in one component, one in the first component",
			values: map[string]map[string]any{
				"cni-plugins":        {"imagePullPolicy": "Sometimes"},
				"machine-controller": {"replicas": 0, "workerCount": 0},
			},
			want: []string{
				"cni-plugins: the values do not match", "- at '/imagePullPolicy': value must be one of 'Always', 'IfNotPresent', 'Never'",
				"machine-controller: the values do not match", "- at '/replicas': minimum: got 0, want 1", "- at '/workerCount': minimum: got 0, want 1",
			},
		},
		{
			name: "a template refuses a combination; images are pinned",
			values: map[string]map[string]any{
				"kubevirt": {"disabledFeatureGates": []any{"LiveMigration"}},
				"multus":   {"images": map[string]any{"multus": "evil/multus:1"}},
			},
			want: []string{
				"kubevirt: failed to render chart kubevirt: ", "feature gate LiveMigration is both enabled and disabled",
				"multus: the images value cannot be set: images are pinned per version",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(releases, tt.values)
			if err == nil {
				t.Fatal("the values were accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	if err := Validate(releases, map[string]map[string]any{"kubevirt": {"useEmulation": true}}); err != nil {
		t.Errorf("good values refused: %v", err)
	}
}

// TestTemplateWritesNothingOnError: with bad values in two components,
// Template writes not a byte (it wrote every manifest of the components
// before the first bad one) and names both.
func TestTemplateWritesNothingOnError(t *testing.T) {
	releases := defaultReleases(t)
	var out bytes.Buffer
	values := map[string]map[string]any{
		"kubevirt": {"uninstallStrategy": "Foo"},
		"cdi":      {"uninstallStrategy": "Bar"},
	}
	err := Template(&out, releases, values, "v1.36.0")
	if err == nil || !strings.Contains(err.Error(), "kubevirt: ") || !strings.Contains(err.Error(), "cdi: ") {
		t.Errorf("error %v, want one naming kubevirt and cdi", err)
	}
	if out.Len() != 0 {
		t.Errorf("wrote %d bytes before failing", out.Len())
	}
	if err := Template(&out, releases, nil, "not-a-version"); err == nil || out.Len() != 0 {
		t.Errorf("bad Kubernetes version: error %v, %d bytes written", err, out.Len())
	}
}

// TestInstallWithBadValuesWritesNothing: with bad values in two components
// Install sends not one request, names both problems, and leaves the
// cluster as it was (it installed cni-plugins and multus before refusing
// kubevirt's values).
func TestInstallWithBadValuesWritesNothing(t *testing.T) {
	env := requireEnv(t)
	counter := envtest.NewRequestCounter()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counter.Wrap)
	poller := testPoller
	poller.Timeout = 2 * time.Second
	inst, err := New(cfg, defaultReleases(t), &syncBuffer{}, nil, poller)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if counter.Total() > 0 {
			ctx := context.WithoutCancel(t.Context())
			_ = newInstaller(t, env, defaultReleases(t), &syncBuffer{}).Uninstall(ctx, UninstallOptions{CRDs: true})
		}
	})
	values := map[string]map[string]any{"kubevirt": {"uninstallStrategy": "Foo"}, "cdi": {"uninstallStrategy": "Bar"}}
	_, err = inst.Install(t.Context(), Options{Values: values})
	if err == nil {
		t.Fatal("bad values were accepted")
	}
	for _, want := range []string{"nothing was changed", "kubevirt: the values do not match", "cdi: the values do not match"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if n := counter.Total(); n != 0 {
		t.Errorf("%d API requests (%d writes) before the values were refused: %v", n, counter.Total("POST", "PUT", "PATCH", "DELETE"), counter.Counts())
	}
}
