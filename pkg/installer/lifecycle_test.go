package installer

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/installertest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// TestLifecycle drives one installation through its life against a real API
// server, with installertest.Simulator playing kubelets and operators:
// install of the previous KubeVirt, refused version change, upgrade, a
// second run that writes nothing, reconfiguration, and uninstall down to
// nothing of ours.
func TestLifecycle(t *testing.T) {
	env := requireEnv(t)
	sim := installertest.Start(t, testClient)
	current := defaultReleases(t)

	t.Run("install waits for each component in dependency order", func(t *testing.T) {
		checkFirstInstall(t, sim, withOlderKubeVirt(current))
	})
	t.Run("install refuses to change a version", func(t *testing.T) {
		out := &syncBuffer{}
		_, err := newInstaller(t, env, current, out).Install(t.Context(), Options{})
		if err == nil || !strings.Contains(err.Error(), "kubevirt is installed at v1.8.4, the installer pins v1.9.0; run `kubevirt-installer upgrade`") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("upgrade moves KubeVirt and waits for the new version", func(t *testing.T) {
		checkUpgrade(t, testClient, newInstaller(t, env, current, &syncBuffer{}))
	})
	t.Run("a second run changes nothing", func(t *testing.T) {
		before := snapshot(t, testClient)
		results, err := newInstaller(t, env, current, &syncBuffer{}).Install(t.Context(), Options{Upgrade: true})
		if err != nil {
			t.Fatal(err)
		}
		want := []Result{
			{"cni-plugins", ActionUnchanged, 1}, {"multus", ActionUnchanged, 1},
			{"kubevirt", ActionUnchanged, 2}, {"cdi", ActionUnchanged, 1},
			{"infra-controller", ActionUnchanged, 1}, {"machine-controller", ActionUnchanged, 1},
		}
		if diff := cmp.Diff(want, results); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(before, snapshot(t, testClient)); diff != "" {
			t.Errorf("objects changed (-before +after):\n%s", diff)
		}
	})
	t.Run("changed values reconfigure only their component", func(t *testing.T) {
		checkReconfigure(t, testClient, newInstaller(t, env, current, &syncBuffer{}))
	})
	t.Run("uninstall removes operator resources before operators", func(t *testing.T) {
		sim.SetLeaveLeftovers(true)
		defer sim.SetLeaveLeftovers(false)
		checkUninstall(t, testClient, newInstaller(t, env, current, &syncBuffer{}))
	})
	t.Run("uninstall --crds leaves nothing of ours", func(t *testing.T) {
		out := &syncBuffer{}
		if err := newInstaller(t, env, current, out).Uninstall(t.Context(), UninstallOptions{CRDs: true}); err != nil {
			t.Fatal(err)
		}
		if left := snapshot(t, testClient); len(left) != 0 {
			t.Errorf("left behind: %v", left)
		}
	})
}

func checkFirstInstall(t *testing.T, sim *installertest.Simulator, releases []components.Release) {
	t.Helper()
	env := testEnv
	out := &syncBuffer{}
	sim.Hold("DaemonSet")
	done := make(chan error, 1)
	var results []Result
	go func() {
		var err error
		results, err = newInstaller(t, env, releases, out).Install(t.Context(), Options{})
		done <- err
	}()
	poll.UntilTrue(t, 30*time.Second, "the install waiting for the held DaemonSet", func() (bool, error) {
		return strings.Contains(out.String(), "DaemonSet kube-system/cni-plugins: generation 1 not yet observed"), nil
	})
	sim.Release("DaemonSet")
	if err := <-done; err != nil {
		t.Fatalf("install failed: %v\n%s", err, out.String())
	}
	want := []Result{
		{"cni-plugins", ActionInstalled, 1}, {"multus", ActionInstalled, 1},
		{"kubevirt", ActionInstalled, 1}, {"cdi", ActionInstalled, 1},
		{"infra-controller", ActionInstalled, 1}, {"machine-controller", ActionInstalled, 1},
	}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	order := []string{"[1/6] cni-plugins", "[2/6] multus", "[3/6] kubevirt v1.8.4", "[4/6] cdi", "[5/6] infra-controller", "[6/6] machine-controller"}
	if err := inOrder(out.String(), order...); err != nil {
		t.Errorf("%v\n%s", err, out.String())
	}
	checkInstalledObjects(t, testClient)
}

// TestForeignReleaseIsNeverTouched installs a "multus" release from another
// chart and checks that install and uninstall refuse to touch it.
func TestForeignReleaseIsNeverTouched(t *testing.T) {
	env := requireEnv(t)
	current := defaultReleases(t)
	multus, _ := components.Find(current, "multus")
	foreign := *multus.Chart
	md := *foreign.Metadata
	md.Annotations = nil
	foreign.Metadata = &md
	inst := newInstaller(t, env, current, &syncBuffer{})
	values, err := multus.Values(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inst.Helm.Install(t.Context(), &foreign, "multus", "kube-system", values); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := inst.Helm.Uninstall("multus", "kube-system"); err != nil {
			t.Error(err)
		}
	})
	only := []components.Release{multus}
	inst.Releases = only
	_, err = inst.Install(t.Context(), Options{})
	if err == nil || !strings.Contains(err.Error(), "release kube-system/multus exists but was not installed by kubevirt-installer") {
		t.Errorf("install: %v", err)
	}
	err = inst.Uninstall(t.Context(), UninstallOptions{})
	if err == nil || !strings.Contains(err.Error(), "was not installed by kubevirt-installer") {
		t.Errorf("uninstall: %v", err)
	}
	rel, err := inst.Helm.Last("multus", "kube-system")
	if err != nil || rel == nil || rel.Version != 1 {
		t.Errorf("the foreign release changed: %v, %v", rel, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	err = testClient.Get(t.Context(), types.NamespacedName{Name: "network-attachment-definitions.k8s.cni.cncf.io"}, crd)
	if !apierrors.IsNotFound(err) {
		t.Errorf("the refused install applied the CRD anyway: %v", err)
	}
}
