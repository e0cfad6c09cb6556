package installer

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/installertest"
)

// TestInstallStopsAndResumes: an install whose third component never becomes
// ready says what it installed and left and how to go on; running it again
// changes nothing that was ready and continues.
func TestInstallStopsAndResumes(t *testing.T) {
	env := requireEnv(t)
	sim := installertest.Start(t, testClient)
	releases := only(t, "cni-plugins", "multus", "kubevirt", "cdi")
	inst := newInstaller(t, env, releases, &syncBuffer{})
	// Deferred, not a Cleanup: the simulator stops with the test's context,
	// and the uninstall needs it to finalize the operator resources.
	defer func() {
		if err := newInstaller(t, env, releases, &syncBuffer{}).Uninstall(t.Context(), UninstallOptions{CRDs: true}); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}()
	sim.Hold("KubeVirt")
	// The bound covers the CRDs' Established wait before the readiness wait it
	// is meant to end; 1 s ran out on that first wait on a loaded machine.
	inst.Poller.Timeout = 10 * time.Second
	_, err := inst.Install(t.Context(), Options{})
	var partial *PartialError
	if !errors.As(err, &partial) {
		t.Fatalf("got %v, want a PartialError", err)
	}
	want := &PartialError{
		Converged: []Result{{"cni-plugins", ActionInstalled, 1}, {"multus", ActionInstalled, 1}},
		Failed:    "kubevirt",
		Left: "namespace kubevirt, CRDs kubevirts.kubevirt.io, " +
			"release kubevirt/kubevirt revision 1 (deployed)",
		NotStarted: []string{"cdi"},
		Fresh:      true,
		Command:    "install",
	}
	if diff := cmp.Diff(want, partial, cmpopts.IgnoreFields(PartialError{}, "Err")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, s := range []string{"kubevirt: kubevirt is not ready: timed out after 10s", "run `kubevirt-installer install` again", "run `kubevirt-installer uninstall`"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}

	sim.Release("KubeVirt")
	inst.Poller.Timeout = testPoller.Timeout
	results, err := inst.Install(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantResults := []Result{
		{"cni-plugins", ActionUnchanged, 1}, {"multus", ActionUnchanged, 1},
		{"kubevirt", ActionUnchanged, 1}, {"cdi", ActionInstalled, 1},
	}
	if diff := cmp.Diff(wantResults, results); diff != "" {
		t.Errorf("resumed install (-want +got):\n%s", diff)
	}
}

// only returns the default releases with the given names, in order.
func only(t *testing.T, names ...string) []components.Release {
	t.Helper()
	out := make([]components.Release, 0, len(names))
	for _, name := range names {
		r, ok := components.Find(defaultReleases(t), name)
		if !ok {
			t.Fatalf("no component %s", name)
		}
		out = append(out, r)
	}
	return out
}

// TestPartialErrorSaysHowToGoOn: the report names what is in place and
// offers an uninstall as a roll back only when it removes no more than the
// failed run installed.
func TestPartialErrorSaysHowToGoOn(t *testing.T) {
	cause := errors.New("kubevirt is not ready")
	tests := []struct {
		name string
		err  *PartialError
		want []string
		not  []string
	}{
		{
			name: "first install",
			err: &PartialError{
				Converged: []Result{{"cni-plugins", ActionInstalled, 1}}, Failed: "multus", Left: "release kube-system/multus revision 1 (failed)",
				NotStarted: []string{"kubevirt"}, Fresh: true, Command: "install", Err: cause,
			},
			want: []string{
				"multus: kubevirt is not ready\n", "ready: cni-plugins (installed, revision 1)\n",
				"left by multus: release kube-system/multus revision 1 (failed)\n", "not started: kubevirt\n",
				"run `kubevirt-installer install` again", "to roll back, run `kubevirt-installer uninstall`",
			},
		},
		{
			name: "upgrade of an existing installation",
			err: &PartialError{
				Converged: []Result{{"cni-plugins", ActionUnchanged, 1}}, Failed: "kubevirt", Left: "release kubevirt/kubevirt revision 3 (deployed)",
				Command: "upgrade", Err: cause,
			},
			want: []string{"not started: none\n", "run `kubevirt-installer upgrade` again", "nothing to roll back to"},
			not:  []string{"to roll back, run"},
		},
		{
			name: "refused before any change",
			err:  &PartialError{Failed: "cni-plugins", Left: nothing, Unchanged: true, Command: "install", Err: cause},
			want: []string{"the install stopped at cni-plugins before changing anything on the cluster"},
			not:  []string{"uninstall"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := tt.err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(msg, n) {
					t.Errorf("message has %q:\n%s", n, msg)
				}
			}
			if !errors.Is(tt.err, cause) {
				t.Error("the cause does not unwrap")
			}
		})
	}
}
