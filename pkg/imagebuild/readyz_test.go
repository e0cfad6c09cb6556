package imagebuild

import (
	"archive/tar"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/kkp"
)

// kkpMounts is where Kubermatic mounts the controller's kubeconfig and CA
// bundle, the directory the KKP test data's command line names KKP_DIR.
const kkpMounts = "/etc/kubernetes"

// TestControllerImageReadyAsKubermaticRunsIt: the controller binary and
// root files of the machine-controller image, started from the image's
// layers as Kubermatic's pod starts it (its command line and environment,
// uid and gid 65534 without capabilities, the root read-only with only a
// tmpfs at /tmp), against a real API server as user and infra cluster,
// answers /readyz with 200 and keeps running.
func TestControllerImageReadyAsKubermaticRunsIt(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running the image's binary as uid 65534 in a read-only root needs root")
	}
	env := cluster.Env(t)
	img := machineControllerAMD64(t)
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	root := extractRoot(t, files(t, img))
	kubeconfig, err := env.UserKubeconfig(kkp.User, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, kkpMounts), 0o755); err != nil { //nolint:gosec // read by uid 65534
		t.Fatal(err)
	}
	if err := kkp.WriteFiles(filepath.Join(root, kkpMounts), map[string][]byte{"kubeconfig": kubeconfig, "ca-bundle.pem": env.Config.CAData}); err != nil {
		t.Fatal(err)
	}
	// Kubermatic's ports are the pod's own; on this machine other tests
	// and their servers share one network, so the ports are free ones on
	// the same all-interfaces address.
	healthPort, metricsPort := port(t, envtest.FreeAddress(t)), port(t, envtest.FreeAddress(t))
	args := kkp.WithAddress(kkp.ControllerArgs(kkpMounts), "-health-probe-address", "0.0.0.0:"+healthPort)
	args = kkp.WithAddress(args, "-metrics-address", "0.0.0.0:"+metricsPort)
	// The image's environment; HOME from its passwd entry, as the runtime
	// sets it; then Kubermatic's.
	procEnv := append(append([]string{}, cfg.Config.Env...), "HOME=/nonexistent",
		"KUBEVIRT_KUBECONFIG="+base64.StdEncoding.EncodeToString(env.KubeconfigBytes), "POD_NAMESPACE="+kkpNamespace)
	started := time.Now()
	p := kkp.StartConfined(t, "machine-controller", root, cfg.Config.Entrypoint[0], args, procEnv)
	kkp.WaitServing(t, p, "http://127.0.0.1:"+healthPort+"/readyz", nil, 2*time.Minute)
	t.Logf("ready %s after the start", time.Since(started).Round(time.Millisecond))
	p.CheckConfined(t)
	p.Running(t)
}

// extractRoot writes the image's files, directories and hard links, with
// their modes, into a new directory that uid 65534 may enter, and returns
// it.
func extractRoot(t *testing.T, fsys map[string]layerFile) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil { //nolint:gosec // the root of the confined process, as an image's is
		t.Fatal(err)
	}
	names := make([]string, 0, len(fsys))
	for name := range fsys {
		names = append(names, name)
	}
	sort.Strings(names) // directories before what they hold
	for _, name := range names {
		if err := extractEntry(root, fsys[name]); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func extractEntry(root string, f layerFile) error {
	target := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(f.hdr.Name, "/")))
	mode := os.FileMode(f.hdr.Mode).Perm()
	switch f.hdr.Typeflag {
	case tar.TypeDir:
		if err := os.Mkdir(target, mode); err != nil {
			return fmt.Errorf("failed to create %s: %w", f.hdr.Name, err)
		}
		return os.Chmod(target, mode) // without the umask
	case tar.TypeReg:
		if err := os.WriteFile(target, f.data, mode); err != nil {
			return fmt.Errorf("failed to write %s: %w", f.hdr.Name, err)
		}
		return os.Chmod(target, mode)
	case tar.TypeLink:
		if err := os.Link(filepath.Join(root, filepath.FromSlash(f.hdr.Linkname)), target); err != nil {
			return fmt.Errorf("failed to link %s: %w", f.hdr.Name, err)
		}
		return nil
	}
	return fmt.Errorf("%s: an entry of type %c, which images built here do not hold", f.hdr.Name, f.hdr.Typeflag)
}

// port is the port of a host:port address.
func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
