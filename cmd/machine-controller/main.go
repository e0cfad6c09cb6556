// Command machine-controller turns cluster.k8s.io/v1alpha1 Machines into
// KubeVirt VirtualMachines. Its render sub-command shows, without touching a
// cluster, what a MachineDeployment will produce.
//
// Run with a sub-command (run, webhook, render, catalog) it takes this
// project's flags. Run without one, as Kubermatic runs it
// (`machine-controller -kubeconfig … -node-csr-approver`), it takes the
// flags of Kubermatic's machine-controller; run as `webhook` (the same
// binary under that name), those of Kubermatic's webhook.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// run runs the command line args (args[0] is the program) and returns the
// exit code: 0, 1 for an error, 2 for a command line that does not parse.
func run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer, getenv func(string) string) int {
	if len(args) == 2 && (args[1] == "-version" || args[1] == "--version") {
		fmt.Fprintln(out, version.Line(strings.TrimSuffix(filepath.Base(args[0]), ".exe")))
		return 0
	}
	// Every process of this binary (controller, webhook) serves
	// machine_controller_build_info with the metrics it has.
	err := version.Register(ctrlmetrics.Registry, "machine_controller")
	if err != nil {
		fmt.Fprintln(errOut, "Error:", err)
		return 1
	}
	switch mode(args) {
	case modeKKPWebhook:
		err = runKKPWebhook(ctx, args[1:], getenv, errOut)
	case modeKKPController:
		err = runKKPController(ctx, args[1:], getenv, errOut)
	default:
		root := newRootCmd(in, out, errOut)
		root.SetArgs(args[1:])
		err = root.ExecuteContext(ctx)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(errOut, "Error:", err)
		return 2
	}
	fmt.Fprintln(errOut, "Error:", err)
	return 1
}

// errUsage marks a command line that does not parse.
var errUsage = errors.New("invalid command line")

// The ways the binary is run.
const (
	modeCommands = iota
	modeKKPController
	modeKKPWebhook
)

// mode tells how args are meant: as the webhook binary of Kubermatic
// (program name webhook), as Kubermatic's machine-controller (no
// sub-command: no argument, or a first argument that is a flag but asks
// for help), or as this project's sub-commands.
func mode(args []string) int {
	if len(args) > 0 && strings.TrimSuffix(filepath.Base(args[0]), ".exe") == "webhook" {
		return modeKKPWebhook
	}
	if len(args) < 2 {
		return modeKKPController
	}
	switch args[1] {
	case "-h", "--help", "help", "completion", "--version", "version":
		return modeCommands
	}
	if strings.HasPrefix(args[1], "-") {
		return modeKKPController
	}
	return modeCommands
}
