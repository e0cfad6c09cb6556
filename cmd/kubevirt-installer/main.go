// Command kubevirt-installer installs KubeVirt, CDI, Multus and the CNI
// reference plugins on an infra cluster with the Helm v3 SDK, and upgrades,
// inspects and uninstalls them. See docs/installer.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func main() {
	// The installer reports through its own output; controller-runtime's
	// client has nothing to add.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCommand(os.Stdout, os.Stderr, nil).ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
