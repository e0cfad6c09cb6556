package envtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// unshareTool makes the namespaces (from util-linux).
const unshareTool = "unshare"

// userNamespaceArgs make a user namespace in which the caller is root, and
// a mount namespace owned by it: what an ordinary user may do where the
// kernel allows unprivileged user namespaces. The program sees its files
// as root's; outside, it runs with the caller's own uid.
var userNamespaceArgs = []string{"--user", "--map-root-user", "--mount", "--propagation", "private"}

// mountNamespaceArgs make a mount namespace only, which needs root (or
// CAP_SYS_ADMIN): the fallback for root where user namespaces are not
// allowed.
var mountNamespaceArgs = []string{"--mount", "--propagation", "private"}

// privateMounts returns the command prefix that runs a program in a mount
// namespace of its own, where it may mount tmpfs over /run and /tmp: an
// unprivileged user namespace where allowed, else, for root, a plain mount
// namespace. It says what the host lacks when neither works. The answer is
// found once per process.
func privateMounts() ([]string, error) {
	return privateMountsOnce()
}

var privateMountsOnce = sync.OnceValues(func() ([]string, error) { return findPrivateMounts(os.Geteuid() == 0) })

func findPrivateMounts(root bool) ([]string, error) {
	tool, err := exec.LookPath(unshareTool)
	if err != nil {
		return nil, fmt.Errorf("cdi-controller runs in a mount namespace of its own, made by %s, which was not found: install util-linux: %w", unshareTool, err)
	}
	userErr := probeNamespace(tool, userNamespaceArgs)
	if userErr == nil {
		return append([]string{tool}, userNamespaceArgs...), nil
	}
	if root {
		if err := probeNamespace(tool, mountNamespaceArgs); err == nil {
			return append([]string{tool}, mountNamespaceArgs...), nil
		}
	}
	return nil, fmt.Errorf("cdi-controller reads its keys from and writes to fixed paths under /run and /tmp, so it runs in a mount namespace of its own, "+
		"which this host does not let this user make: %w; allow unprivileged user namespaces "+
		"(sysctl user.max_user_namespaces above 0; kernel.unprivileged_userns_clone=1 where it exists; "+
		"kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu) or run as root", userErr)
}

// probeNamespace runs true in the namespaces args make, with a tmpfs
// mounted there as cdi-controller's script does.
func probeNamespace(tool string, args []string) error {
	argv := append(append([]string{}, args...), "sh", "-c", "mount -t tmpfs tmpfs /tmp")
	var stderr bytes.Buffer
	cmd := exec.Command(tool, argv...) //nolint:gosec,noctx // a fixed probe that ends at once
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return fmt.Errorf("%s %s: %w", unshareTool, strings.Join(args, " "), err)
		}
		return fmt.Errorf("%s %s: %s", unshareTool, strings.Join(args, " "), msg)
	}
	return nil
}
