// Command infra-controller runs against a KubeVirt infra cluster and
// prepares every tenant namespace (cluster-<id>) for the KubeVirt cloud
// provider: it keeps VM presets, instancetypes and preferences in sync and
// initializes storage classes in tenant clusters. See
// docs/infra-controller.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flags"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/restmapper"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/version"
)

func main() {
	if err := runMain(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

// runMain runs the command line until SIGINT or SIGTERM; -help is no
// error.
func runMain() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) == 2 && (os.Args[1] == "-version" || os.Args[1] == "--version") {
		fmt.Println(version.Line("infra-controller"))
		return nil
	}
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		return err
	}
	return nil
}

// run parses args (package flags) and runs the manager until ctx ends.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	s, err := flags.Parse(args, stderr)
	if err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(s.Development), zap.WriteTo(stderr)))
	if err := version.Register(ctrlmetrics.Registry, "infra_controller"); err != nil {
		return err
	}
	cfg, err := kubeconfig.OperatorConfig(s.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = s.QPS, s.Burst
	cfg.UserAgent = "infra-controller"
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Cache:                   infracontroller.CacheOptions(s.Options),
		MapperProvider:          restmapper.New,
		Metrics:                 metricsserver.Options{BindAddress: s.MetricsAddr},
		HealthProbeBindAddress:  s.ProbeAddr,
		LeaderElection:          s.LeaderElect,
		LeaderElectionID:        "infra-controller.kkp-kubevirt.io",
		LeaderElectionNamespace: s.LeaderElectionNamespace,
	})
	if err != nil {
		return fmt.Errorf("failed to create the manager: %w", err)
	}
	if _, err := infracontroller.Setup(mgr, s.Options); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("failed to add the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("informers", cacheSynced(mgr)); err != nil {
		return fmt.Errorf("failed to add the readiness check: %w", err)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("failed to run the manager: %w", err)
	}
	return nil
}

// cacheSynced is ready once every informer the controllers use has synced.
func cacheSynced(mgr manager.Manager) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("informers have not synced yet")
		}
		return nil
	}
}
