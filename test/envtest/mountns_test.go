package envtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrivateMountsWork(t *testing.T) {
	wrap, err := findPrivateMounts(os.Geteuid() == 0)
	if err != nil {
		t.Skipf("this host lets nobody here make a mount namespace: %v", err)
	}
	// Root too takes the user namespace where it may: the way an ordinary
	// user runs cdi-controller is then the way every run does.
	if probeNamespace(wrap[0], userNamespaceArgs) == nil && strings.Join(wrap[1:], " ") != strings.Join(userNamespaceArgs, " ") {
		t.Errorf("namespaces %q, want a user namespace", wrap[1:])
	}
}

// Where unshare is missing or the kernel refuses the namespaces, the error
// says what the host needs instead of failing later inside cdi-controller.
func TestPrivateMountsSayWhatIsMissing(t *testing.T) {
	t.Run("no unshare", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := findPrivateMounts(false)
		if err == nil || !strings.Contains(err.Error(), "install util-linux") {
			t.Errorf("error %v, want one naming util-linux", err)
		}
	})
	t.Run("user namespaces refused", func(t *testing.T) {
		dir := t.TempDir()
		refuse := "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n"
		if err := os.WriteFile(filepath.Join(dir, unshareTool), []byte(refuse), 0o700); err != nil { //nolint:gosec // a script of the test
			t.Fatal(err)
		}
		t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		_, err := findPrivateMounts(false)
		for _, want := range []string{"Operation not permitted", "user.max_user_namespaces", "run as root"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want one containing %q", err, want)
			}
		}
	})
}
