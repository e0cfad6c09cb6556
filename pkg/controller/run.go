package controller

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cachetrim"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/metrics"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/nodecsr"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote/outage"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/restmapper"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// envKubeconfig is the environment variable the KubeVirt provider reads
// the default infra kubeconfig from.
const envKubeconfig = "KUBEVIRT_KUBECONFIG"

// leaderElectionID names the leader election lease.
const leaderElectionID = "machine-controller-kubevirt"

// leaseName is the leader election lease of the controller called name:
// controllers of different names elect their leaders apart.
func leaseName(name string) string {
	if name == "" {
		return leaderElectionID
	}
	return leaderElectionID + "-" + name
}

// RunOptions configure a machine-controller process.
type RunOptions struct {
	// UserConfig reaches the user cluster, where Machines live. Required.
	UserConfig *rest.Config
	// InfraKubeconfig is the default infra kubeconfig (raw or base64). When
	// empty, Getenv(KUBEVIRT_KUBECONFIG) is used. With neither, every spec
	// must name its own kubeconfig. Either way the infra namespace of every
	// Machine is watched from its first reconcile; that of the default
	// kubeconfig and namespace from the start.
	InfraKubeconfig []byte
	// InfraNamespace is the default infra namespace, watched from the
	// start; "" means the infra kubeconfig's context namespace.
	InfraNamespace string
	// WorkerCount is the number of objects each controller reconciles at once.
	WorkerCount int
	// DrainTimeout bounds the drain of a deleted Machine's Node; 0 takes
	// machine.DefaultDrainTimeout, negative disables drains.
	DrainTimeout time.Duration
	// JoinTimeout replaces Machines of a MachineSet whose Node does not
	// join in time; 0 disables.
	JoinTimeout time.Duration
	// StoppedGrace is how long a Machine's instance may be down before a
	// Machine of a MachineSet is replaced; 0 takes
	// machine.DefaultStoppedGrace, negative disables.
	StoppedGrace time.Duration
	// MaxRetryDelay caps the retry backoff of a failing reconcile;
	// queue.DefaultMaxRetryDelay when 0.
	MaxRetryDelay time.Duration
	// InfraNodeLabels names the ConfigMap listing the infra node labels to
	// copy to Nodes; off when empty (see machine.Options.InfraNodeLabels).
	InfraNodeLabels types.NamespacedName
	// SkipNameValidation lets Run be called more than once in a process
	// (tests that restart the controller); see Options.
	SkipNameValidation bool
	// Name selects the Machines this controller handles (see
	// machine.Options.Name).
	Name string
	// MetricsAddress and HealthAddress are bind addresses; "0" disables.
	MetricsAddress, HealthAddress string
	// PprofAddress is where Go's profiles are served; "" or "0" disables.
	PprofAddress string
	// ProfileOnMetrics serves Go's profiles under /debug/pprof/ on the
	// metrics address too, as Kubermatic's -enable-profiling does.
	ProfileOnMetrics bool
	// LeaderElection enables leader election in LeaderElectionNamespace.
	LeaderElection          bool
	LeaderElectionNamespace string
	// NodeCSRApprover approves the serving certificate requests of the
	// Nodes of this controller's Machines.
	NodeCSRApprover bool
	// LeaderElectionID names the lease; "" takes one derived from Name.
	// Kubermatic's machine-controller uses "machine-controller" whatever
	// its name, so that during an image swap the old and the new process
	// never run at once.
	LeaderElectionID string
	// Log is the process logger; zap.NewNop when nil.
	Log *zap.Logger
	// Getenv reads the environment; required (os.Getenv in production).
	Getenv func(string) string
}

// Run starts the controllers and blocks until ctx ends.
func (o RunOptions) Run(ctx context.Context) error {
	if o.UserConfig == nil || o.Getenv == nil {
		return errors.New("run needs a user cluster configuration and an environment")
	}
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	ctrl.SetLogger(zapr.NewLogger(log))
	infraKubeconfig, err := decodeKubeconfig(cmp.Or(string(o.InfraKubeconfig), o.Getenv(envKubeconfig)))
	if err != nil {
		return err
	}
	mgr, err := o.newManager()
	if err != nil {
		return err
	}
	m, err := metrics.Register(ctrlmetrics.Registry)
	if err != nil {
		return err
	}
	if err := metrics.RegisterMachines(ctrlmetrics.Registry, mgr.GetClient()); err != nil {
		return err
	}
	clients, err := infra.NewClients(infra.Options{UserAgent: "machine-controller", WrapTransport: m.WrapTransport})
	if err != nil {
		return err
	}
	defer clients.Stop()
	opts := Options{Log: log.Sugar(), WorkerCount: o.WorkerCount, InfraNamespace: o.InfraNamespace, DrainTimeout: o.DrainTimeout, JoinTimeout: o.JoinTimeout,
		StoppedGrace: o.StoppedGrace, MaxRetryDelay: o.MaxRetryDelay, SkipNameValidation: o.SkipNameValidation, Name: o.Name,
		InfraNodeLabels: o.InfraNodeLabels, InfraClients: clients,
	}
	if len(infraKubeconfig) > 0 {
		_, ns, err := kubeconfig.Parse(infraKubeconfig)
		if err != nil {
			return err
		}
		// The provider's client of the default kubeconfig and namespace:
		// the watches share its informers.
		opts.InfraNamespace = cmp.Or(o.InfraNamespace, ns)
		if opts.Infra, err = clients.Cluster(ctx, infraKubeconfig, opts.InfraNamespace); err != nil {
			return err
		}
		if opts.InfraPinned, err = clients.Get(ctx, infraKubeconfig, opts.InfraNamespace); err != nil {
			return err
		}
	}
	encoded := base64.StdEncoding.EncodeToString(infraKubeconfig)
	provider := kubevirt.New(kubevirt.Options{
		Clients:   clients,
		Namespace: o.InfraNamespace,
		Client:    mgr.GetClient(),
		Getenv: func(key string) string {
			if key == envKubeconfig && len(infraKubeconfig) > 0 {
				return encoded
			}
			return o.Getenv(key)
		},
	})
	opts.Provider = m.InstrumentProvider(provider)
	// The provider names every VM like its Machine.
	opts.ProviderID = func(machine *clusterv1alpha1.Machine) string { return vm.ProviderID(machine.Name) }
	opts.TemplateRevision, opts.RevisionObjects = provider.TemplateRevision, kubevirt.RevisionObjects()
	opts.Capacity = provider
	if err := Add(mgr, opts); err != nil {
		return err
	}
	if o.NodeCSRApprover {
		if err := nodecsr.Add(mgr, nodecsr.Options{Name: o.Name, Log: log.Sugar(), Queue: queue.Options{
			Workers: o.WorkerCount, MaxRetryDelay: o.MaxRetryDelay, SkipNameValidation: o.SkipNameValidation,
		}}); err != nil {
			return err
		}
	}
	log.Info("Starting machine-controller", zap.Int("workers", o.WorkerCount), zap.Bool("infraPinned", opts.InfraPinned != nil))
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("failed to run the manager: %w", err)
	}
	return nil
}

// newManager returns the manager of the user cluster.
func (o RunOptions) newManager() (ctrl.Manager, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("failed to build the scheme: %w", err)
	}
	if err := clusterv1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("failed to build the scheme: %w", err)
	}
	mgr, err := ctrl.NewManager(o.UserConfig, ctrl.Options{
		Scheme: scheme,
		// Secrets and ConfigMaps (bootstrap user data, ConfigVar references)
		// are read one by one when a Machine is created, never listed: no
		// cluster-wide informer, so the controller needs only "get" on them.
		Client: ctrlruntimeclient.Options{Cache: &ctrlruntimeclient.CacheOptions{
			DisableFor: []ctrlruntimeclient.Object{&corev1.Secret{}, &corev1.ConfigMap{}},
		}},
		Cache: cache.Options{NewInformer: outage.NewInformer, DefaultTransform: cachetrim.User, ByObject: map[ctrlruntimeclient.Object]cache.ByObject{
			// Only the requests the node CSR approver decides on.
			&certificatesv1.CertificateSigningRequest{}: {Field: fields.OneTermEqualSelector("spec.signerName", certificatesv1.KubeletServingSignerName)},
		}},
		MapperProvider:          restmapper.New,
		Metrics:                 metricsserver.Options{BindAddress: cmp.Or(o.MetricsAddress, "0"), ExtraHandlers: o.metricsHandlers()},
		HealthProbeBindAddress:  cmp.Or(o.HealthAddress, "0"),
		PprofBindAddress:        o.PprofAddress,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        cmp.Or(o.LeaderElectionID, leaseName(o.Name)),
		LeaderElectionNamespace: o.LeaderElectionNamespace,
	})
	if err != nil {
		return nil, fmt.Errorf("failed to create the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("failed to add the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("caches", cachesSynced(mgr.GetCache())); err != nil {
		return nil, fmt.Errorf("failed to add the readiness check: %w", err)
	}
	return mgr, nil
}

// decodeKubeconfig accepts a kubeconfig as YAML/JSON or base64 of it.
func decodeKubeconfig(value string) ([]byte, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil, nil
	}
	if strings.Contains(value, "apiVersion") || strings.HasPrefix(value, "{") {
		return []byte(value), nil
	}
	raw, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		return nil, fmt.Errorf("infra kubeconfig is neither YAML nor base64: %w", err)
	}
	return raw, nil
}

// metricsHandlers are the handlers the metrics server serves beside
// /metrics: Go's profiles with ProfileOnMetrics.
func (o RunOptions) metricsHandlers() map[string]http.Handler {
	if !o.ProfileOnMetrics {
		return nil
	}
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}
