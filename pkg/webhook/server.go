package webhook

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/restmapper"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Paths the webhooks are served at, for all three kinds.
const (
	MutatePath   = "/mutate-cluster-k8s-io-v1alpha1"
	ValidatePath = "/validate-cluster-k8s-io-v1alpha1"
)

// envKubeconfig is the environment variable the provider reads the
// default infra kubeconfig from.
const envKubeconfig = "KUBEVIRT_KUBECONFIG"

// HandlerOptions configure the two admission handlers.
type HandlerOptions struct {
	// Provider defaults and validates providerSpecs. Required.
	Provider Provider
	// Client reads the user cluster's Secrets and ConfigMaps that
	// providerSpecs reference; nil resolves inline values only.
	Client ctrlruntimeclient.Client
	// Name is the controller name (see machine.LabelController).
	Name string
	// InfraBudget bounds the wait for the infra cluster per request;
	// DefaultInfraBudget when 0.
	InfraBudget time.Duration
	// Getenv reads the environment for the provider spec's fallbacks.
	Getenv func(string) string
	// Log logs admissions decided without the infra cluster.
	Log *zap.SugaredLogger
	// KubeletVersions, when set, is a constraint every Machine's kubelet
	// version must meet (Kubermatic's -kubernetes-version-constraints).
	KubeletVersions *semver.Constraints
}

// NewHandlers returns the mutating and the validating handler.
func NewHandlers(o HandlerOptions) (*Mutator, *Validator, error) {
	if o.Provider == nil {
		return nil, nil, errors.New("the webhook needs a provider")
	}
	scheme := runtime.NewScheme()
	if err := clusterv1alpha1.AddToScheme(scheme); err != nil {
		return nil, nil, fmt.Errorf("failed to build the scheme: %w", err)
	}
	a := admitter{
		checker: &specChecker{provider: o.Provider, client: o.Client, getenv: o.Getenv,
			budget: cmp.Or(o.InfraBudget, DefaultInfraBudget), log: cmp.Or(o.Log, zap.NewNop().Sugar())},
		decoder:  admission.NewDecoder(scheme),
		name:     o.Name,
		kubelets: o.KubeletVersions,
	}
	return &Mutator{admitter: a}, &Validator{admitter: a}, nil
}

// Options configure the webhook server.
type Options struct {
	// UserConfig reaches the user cluster. Required.
	UserConfig *rest.Config
	// InfraKubeconfig is the default infra kubeconfig; when empty,
	// Getenv(KUBEVIRT_KUBECONFIG), else each providerSpec's own.
	InfraKubeconfig []byte
	// InfraNamespace is the infra namespace of specs that name none.
	InfraNamespace string
	// Name is the controller name (see machine.LabelController).
	Name string
	// InfraBudget: see HandlerOptions.
	InfraBudget time.Duration
	// KubeletVersions: see HandlerOptions.
	KubeletVersions *semver.Constraints
	// Host and Port are the address the webhooks are served at.
	Host string
	Port int
	// CertFile and KeyFile hold the serving certificate (e.g. a Secret of
	// cert-manager); they are reloaded when they change. Without them,
	// SelfManaged must be set.
	CertFile, KeyFile string
	// SelfManaged generates and rotates the serving certificate itself.
	SelfManaged *SelfManagedTLS
	// MaxInFlight is how many admissions run at once (DefaultMaxInFlight
	// when 0, at most MaxMaxInFlight); a review that finds no free slot
	// within AdmissionWait is answered with 429 at once.
	MaxInFlight int
	// MetricsAddress and HealthAddress are bind addresses; "0" disables.
	MetricsAddress, HealthAddress string
	// Log is the process logger; zap.NewNop when nil.
	Log *zap.Logger
	// Getenv reads the environment; required (os.Getenv in production).
	Getenv func(string) string
}

// DefaultMaxInFlight and MaxMaxInFlight are the default and the largest
// Options.MaxInFlight. The default keeps the worst case within the
// chart's memory limit (docs/machine-controller.md, "Bounded admission").
const (
	DefaultMaxInFlight = 8
	MaxMaxInFlight     = 1024
)

// AdmissionWait is how long a review waits for a free slot before it is
// answered with 429: with the infra budget (2 s) it stays well within the
// API server's timeout (the chart's 10 s).
const AdmissionWait = 2 * time.Second

// CheckMaxInFlight refuses a MaxInFlight outside 1 to MaxMaxInFlight.
func CheckMaxInFlight(n int) error {
	if n < 1 || n > MaxMaxInFlight {
		return fmt.Errorf("at most %d admissions in flight: must be between 1 and %d", n, MaxMaxInFlight)
	}
	return nil
}

// Run serves the webhooks until ctx ends. It elects no leader: every
// replica serves.
func (o Options) Run(ctx context.Context) error {
	if o.UserConfig == nil || o.Getenv == nil {
		return errors.New("the webhook needs a user cluster configuration and an environment")
	}
	if (o.CertFile == "") != (o.KeyFile == "") || (o.CertFile == "" && o.SelfManaged == nil) {
		return errors.New("the webhook needs both a certificate and a key file, or a self-managed certificate")
	}
	inFlight := cmp.Or(o.MaxInFlight, DefaultMaxInFlight)
	if err := CheckMaxInFlight(inFlight); err != nil {
		return err
	}
	log := cmp.Or(o.Log, zap.NewNop())
	ctrl.SetLogger(zapr.NewLogger(log))
	if err := registerMetrics(ctrlmetrics.Registry); err != nil {
		return fmt.Errorf("failed to register the metrics: %w", err)
	}
	mgr, err := o.newManager()
	if err != nil {
		return err
	}
	clients, err := infra.NewClients(infra.Options{UserAgent: "machine-controller-webhook"})
	if err != nil {
		return fmt.Errorf("failed to create the infra clients: %w", err)
	}
	defer clients.Stop()
	mutator, validator, err := NewHandlers(HandlerOptions{
		Provider: kubevirt.New(kubevirt.Options{Clients: clients, Namespace: o.InfraNamespace, Client: mgr.GetClient(), Getenv: o.getenv()}),
		Client:   mgr.GetClient(), Name: o.Name, InfraBudget: o.InfraBudget, Getenv: o.getenv(), Log: log.Sugar(),
		KubeletVersions: o.KubeletVersions,
	})
	if err != nil {
		return err
	}
	// Both paths share the slots: each AdmissionReview is one admission.
	slots := newLimiter(inFlight, AdmissionWait)
	server := mgr.GetWebhookServer()
	server.Register(MutatePath, &reviewServer{hook: &admission.Webhook{Handler: mutator}, limiter: slots})
	server.Register(ValidatePath, &reviewServer{hook: &admission.Webhook{Handler: validator}, limiter: slots})
	// Kubermatic's configuration: one mutating webhook per kind.
	combined := &admission.Webhook{Handler: &Combined{Mutator: mutator, Validator: validator}}
	server.Register(MachineDeploymentsPath, &reviewServer{hook: combined, limiter: slots})
	server.Register(MachinesPath, &reviewServer{hook: combined, limiter: slots})
	server.Register(HealthPath, http.HandlerFunc(healthy))
	log.Info("Starting machine-controller webhook", zap.Int("port", o.Port), zap.Bool("selfManagedCertificate", o.SelfManaged != nil))
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("failed to run the webhook server: %w", err)
	}
	return nil
}

// getenv returns the environment the provider sees: the infra kubeconfig
// of the options, when given, wins over KUBEVIRT_KUBECONFIG.
func (o Options) getenv() func(string) string {
	if len(o.InfraKubeconfig) == 0 {
		return o.Getenv
	}
	encoded := base64.StdEncoding.EncodeToString(o.InfraKubeconfig)
	return func(key string) string {
		if key == envKubeconfig {
			return encoded
		}
		return o.Getenv(key)
	}
}

// certificateSource serves the current certificate and keeps it current
// while it runs.
type certificateSource interface {
	manager.Runnable
	GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error)
}

// newManager returns a manager without controllers or leader election,
// serving the webhooks; it is ready once it serves and has a certificate.
func (o Options) newManager() (manager.Manager, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("failed to build the scheme: %w", err)
	}
	var certs certificateSource
	if o.CertFile != "" {
		watcher, err := certwatcher.New(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("failed to load the serving certificate: %w", err)
		}
		certs = watcher
	} else {
		selfManaged, err := o.SelfManaged.source(o.UserConfig, o.Log)
		if err != nil {
			return nil, err
		}
		certs = selfManaged
	}
	mgr, err := ctrl.NewManager(o.UserConfig, ctrl.Options{
		Scheme: scheme,
		WebhookServer: ctrlwebhook.NewServer(ctrlwebhook.Options{Host: o.Host, Port: o.Port, TLSOpts: []func(*tls.Config){
			func(c *tls.Config) { c.GetCertificate = certs.GetCertificate },
		}}),
		Client:                 ctrlruntimeclient.Options{Cache: &ctrlruntimeclient.CacheOptions{DisableFor: []ctrlruntimeclient.Object{&corev1.Secret{}, &corev1.ConfigMap{}}}},
		Metrics:                metricsserver.Options{BindAddress: cmp.Or(o.MetricsAddress, "0")},
		HealthProbeBindAddress: cmp.Or(o.HealthAddress, "0"),
		MapperProvider:         restmapper.New,
	})
	if err != nil {
		return nil, fmt.Errorf("failed to create the manager: %w", err)
	}
	if err := mgr.Add(certs); err != nil {
		return nil, fmt.Errorf("failed to add the certificate source: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("failed to add the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return nil, fmt.Errorf("failed to add the readiness check: %w", err)
	}
	if err := mgr.AddReadyzCheck("certificate", func(*http.Request) error {
		_, err := certs.GetCertificate(nil)
		return err
	}); err != nil {
		return nil, fmt.Errorf("failed to add the readiness check: %w", err)
	}
	return mgr, nil
}
