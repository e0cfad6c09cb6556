package main

import (
	"strings"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/installertest"
)

// TestCommandsAgainstACluster runs preflight, install, status and uninstall
// through the command line against a real API server, with the simulator
// playing kubelets and operators.
func TestCommandsAgainstACluster(t *testing.T) {
	requireEnv(t)
	sim := installertest.Start(t, testClient)
	cluster := []string{"--kubeconfig", testEnv.KubeconfigPath, "--poll-interval", "20ms", "--timeout", "30s"}
	run := func(t *testing.T, args ...string) (string, error) {
		t.Helper()
		// The command's own flags come last, so they win over the defaults.
		full := append(append([]string{args[0]}, cluster...), args[1:]...)
		return execute(t, full...)
	}

	t.Run("preflight", func(t *testing.T) {
		out, err := run(t, "preflight", "--use-emulation")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		checkGolden(t, "preflight-emulation.golden", out)
	})
	t.Run("install stops on preflight errors", func(t *testing.T) {
		out, err := run(t, "install")
		if err == nil || !strings.Contains(err.Error(), "preflight found errors") {
			t.Fatalf("got %v", err)
		}
		if !strings.Contains(out, "the cluster has no nodes") {
			t.Errorf("output:\n%s", out)
		}
	})
	t.Run("install of the network components", func(t *testing.T) {
		out, err := run(t, "install", "--skip", "kubevirt,cdi,infra-controller,machine-controller")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.HasSuffix(out, "done: 2 installed, 0 upgraded, 0 reconfigured, 0 unchanged\n") {
			t.Errorf("output:\n%s", out)
		}
	})
	t.Run("status of a partial install", func(t *testing.T) {
		sim.Hold("KubeVirt")
		defer sim.Release("KubeVirt")
		out, err := run(t, "install", "--skip", "cdi", "--use-emulation", "--timeout", "1s")
		if err == nil || !strings.Contains(err.Error(), "kubevirt: kubevirt is not ready: timed out after 1s") {
			t.Fatalf("got %v\n%s", err, out)
		}
		for _, want := range []string{
			"ready: cni-plugins (unchanged, revision 1), multus (unchanged, revision 1)\n",
			"left by kubevirt: namespace kubevirt, CRDs kubevirts.kubevirt.io, release kubevirt/kubevirt revision 1 (deployed)\n",
			"not started: infra-controller, machine-controller\n",
			"run `kubevirt-installer install` again with the same flags",
			"`kubevirt-installer uninstall` would remove the whole installation",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q:\n%v", want, err)
			}
		}
		out, err = run(t, "status")
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "status-partial.golden", out)
	})
	t.Run("install again resumes", func(t *testing.T) {
		out, err := run(t, "install", "--skip", "cdi", "--use-emulation")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.HasSuffix(out, "done: 2 installed, 0 upgraded, 0 reconfigured, 3 unchanged\n") {
			t.Errorf("output:\n%s", out)
		}
	})
	t.Run("uninstall --crds", func(t *testing.T) {
		out, err := run(t, "uninstall", "--crds")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		out, err = run(t, "status")
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "status-uninstalled.golden", out)
	})
}
