package envtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// skipEnv, when "true", makes Start skip the test and New return ErrSkipped.
const skipEnv = "SKIP_ENVTEST"

// startTimeout bounds the start of etcd and of kube-apiserver, a restart
// included (controller-runtime's default is 20 s), and the wait for the
// installed CRDs to be served (its default is 10 s): on 2 busy cores, an
// API server with every CRD of test/crds takes longer.
const startTimeout = 2 * time.Minute

// watchDrainTimeout bounds how long a stopping API server waits for its
// watches to end.
const watchDrainTimeout = "1s"

// ErrSkipped is returned by New when SKIP_ENVTEST=true.
var ErrSkipped = errors.New("envtest skipped by " + skipEnv + "=true")

// Env is a running control plane.
type Env struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Client is an uncached admin client whose scheme knows the core,
	// KubeVirt, CDI and cluster.k8s.io types (see Scheme).
	Client ctrlruntimeclient.Client
	// Scheme is the scheme of Client.
	Scheme *runtime.Scheme
	// KubeconfigBytes is an admin kubeconfig of this API server, usable as
	// an infra kubeconfig. Its current context has the namespace given by
	// WithKubeconfigNamespace, or none.
	KubeconfigBytes []byte
	// KubeconfigPath is a file holding KubeconfigBytes.
	KubeconfigPath string
	// SigningCA is the PEM certificate of the CA kube-controller-manager
	// signs CertificateSigningRequests with (WithCSRSigning), else nil.
	SigningCA []byte

	env       *crenvtest.Environment
	kcm       *process
	scheduler *process
	// kubeVirtTool reaches the server of KubeVirt's webhooks beyond them
	// (WithKubeVirt).
	kubeVirtTool *toolClient
	// components are the upstream programs (webhooks, controllers) running
	// beside the API server.
	components []*process
	// unlocks release machine-wide locks the components hold.
	unlocks []func() error
	// onStop run first when the control plane stops (see OnStop).
	onStop   []func() error
	workDir  string
	stopOnce sync.Once
	stopErr  error
}

// Option configures Start and New.
type Option func(*options)

type options struct {
	controllerManager bool
	scheduler         bool
	csrSigning        bool
	kubeVirt          bool
	virtController    bool
	cdiController     bool
	machineWebhook    bool
	crdFiles          []string
	namespace         string
}

// WithControllerManager runs kube-controller-manager beside the API server
// with the garbage collector, the namespace controller and the volume
// controllers (claim binding, PVC and PV protection).
func WithControllerManager() Option {
	return func(o *options) { o.controllerManager = true }
}

// WithCRDFiles installs only the named files of test/crds (for example
// "kubevirt.io.yaml") instead of all of them. No names installs none.
func WithCRDFiles(names ...string) Option {
	return func(o *options) { o.crdFiles = append([]string{}, names...) }
}

// WithKubeconfigNamespace sets the current-context namespace of
// KubeconfigBytes.
func WithKubeconfigNamespace(namespace string) Option {
	return func(o *options) { o.namespace = namespace }
}

// Start starts a control plane for the test and stops it when the test and
// its subtests are done. It skips the test when SKIP_ENVTEST=true and fails
// it when the control plane cannot start.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	env, err := New(t.Context(), opts...)
	if errors.Is(err, ErrSkipped) {
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatalf("failed to start envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("failed to stop envtest: %v", err)
		}
	})
	return env
}

// New starts a control plane; the caller must Stop it. It is the variant of
// Start for TestMain. ctx bounds only the start (building the binaries
// included), not the life of the control plane.
func New(ctx context.Context, opts ...Option) (*Env, error) {
	if os.Getenv(skipEnv) == "true" {
		return nil, ErrSkipped
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	paths, err := crdPaths(o.crdFiles)
	if err != nil {
		return nil, err
	}
	if err := takeSlot(ctx); err != nil {
		return nil, err
	}
	dir, err := controlPlaneBinaries.dir(ctx, nil)
	if err != nil {
		return nil, err
	}
	workDir, err := os.MkdirTemp("", "envtest-")
	if err != nil {
		return nil, fmt.Errorf("failed to create a work directory: %w", err)
	}
	e := &Env{workDir: workDir, env: &crenvtest.Environment{
		BinaryAssetsDirectory:    dir,
		CRDDirectoryPaths:        paths,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: startTimeout,
		CRDInstallOptions:        crenvtest.CRDInstallOptions{MaxTime: startTimeout},
	}}
	if o.machineWebhook {
		if e.env.WebhookInstallOptions, err = webhookInstallOptions(); err != nil {
			return nil, errors.Join(err, e.Stop())
		}
	}
	// Without a bound, open watches (any informer still running) hold the
	// API server's graceful shutdown until envtest kills it after 20s.
	apiServer := e.env.ControlPlane.GetAPIServer()
	apiServer.Configure().Set("shutdown-watch-termination-grace-period", watchDrainTimeout)
	// A certificate directory of our own survives RestartAPIServer, so the
	// restarted API server keeps its serving and client CAs.
	apiServer.CertDir = filepath.Join(workDir, "kube-apiserver")
	if err := os.Mkdir(apiServer.CertDir, 0o700); err != nil {
		return nil, errors.Join(fmt.Errorf("failed to create the API server's certificate directory: %w", err), e.Stop())
	}
	// etcd and kube-apiserver end with this process, like the components.
	if err := e.dieWithProcess(dir); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	if err := e.start(ctx, dir, o); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	return e, nil
}

func (e *Env) start(ctx context.Context, dir string, o options) error {
	cfg, err := e.env.Start()
	if err != nil {
		return fmt.Errorf("failed to start the control plane: %w", err)
	}
	e.Config = cfg
	if e.Scheme, err = NewScheme(); err != nil {
		return err
	}
	if e.Client, err = ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{Scheme: e.Scheme}); err != nil {
		return fmt.Errorf("failed to create a client: %w", err)
	}
	if e.KubeconfigBytes, err = kubeconfigFor(cfg, o.namespace); err != nil {
		return err
	}
	e.KubeconfigPath = filepath.Join(e.workDir, "admin.kubeconfig")
	if err := os.WriteFile(e.KubeconfigPath, e.KubeconfigBytes, 0o600); err != nil {
		return fmt.Errorf("failed to write the admin kubeconfig: %w", err)
	}
	if o.controllerManager {
		// Started after the CRDs are installed, so the garbage collector
		// watches their kinds from its first discovery on.
		var signing *ca
		if o.csrSigning {
			if signing, err = newCA("envtest-csr-signer"); err != nil {
				return err
			}
			e.SigningCA = signing.certPEM
		}
		if e.kcm, err = startControllerManager(dir, e.KubeconfigPath, e.workDir, signing); err != nil {
			return err
		}
	}
	if o.scheduler {
		if e.scheduler, err = startScheduler(dir, e.KubeconfigPath, e.workDir); err != nil {
			return err
		}
	}
	if o.kubeVirt || o.cdiController {
		// Before the CDI CR and the DataVolumes virt-controller makes.
		if err := e.startCDIAdmission(ctx); err != nil {
			return err
		}
	}
	if o.cdiController {
		// Before virt-controller, which exits when CDI's CRDs appear later.
		if err := e.startCDI(ctx); err != nil {
			return err
		}
	}
	if o.kubeVirt {
		return e.startKubeVirt(ctx, o)
	}
	return nil
}

// Kubeconfig returns an admin kubeconfig of this API server whose current
// context has the given namespace ("" for none).
func (e *Env) Kubeconfig(namespace string) ([]byte, error) {
	return kubeconfigFor(e.Config, namespace)
}

// CreateNamespace creates a namespace with a generated name starting with
// prefix and returns its name. It does not delete it: every Env is thrown
// away whole.
func (e *Env) CreateNamespace(t testing.TB, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := e.Client.Create(t.Context(), ns); err != nil {
		t.Fatalf("failed to create namespace: %v", err)
	}
	return ns.Name
}

// OnStop registers f to run when the control plane stops, before anything
// of it stops (the last registered first): the place to end what a test
// runs against the API server, so that it neither outlives the control
// plane nor holds its watches open. f's error is one of Stop's. OnStop
// must not be called concurrently with Stop.
func (e *Env) OnStop(f func() error) {
	e.onStop = append(e.onStop, f)
}

// Stop runs the OnStop functions, stops the controller manager and the
// control plane and removes the work directory. It may be called more than
// once.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() {
		var errs []error
		for i := len(e.onStop) - 1; i >= 0; i-- {
			errs = append(errs, e.onStop[i]())
		}
		for i := len(e.components) - 1; i >= 0; i-- {
			errs = append(errs, e.components[i].stop())
		}
		for _, unlock := range e.unlocks {
			errs = append(errs, unlock())
		}
		for _, p := range []*process{e.scheduler, e.kcm} {
			if p != nil {
				errs = append(errs, p.stop())
			}
		}
		if e.env != nil {
			if err := e.env.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("failed to stop the control plane: %w", err))
			}
		}
		if err := os.RemoveAll(e.workDir); err != nil {
			errs = append(errs, fmt.Errorf("failed to remove %s: %w", e.workDir, err))
		}
		e.stopErr = errors.Join(errs...)
	})
	return e.stopErr
}

// crdPaths returns the CRD files to install: all of test/crds when names is
// nil, else the named files of it.
func crdPaths(names []string) ([]string, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "test", "crds")
	if names == nil {
		return []string{dir}, nil
	}
	paths := make([]string, 0, len(names))
	for _, name := range names {
		paths = append(paths, filepath.Join(dir, name))
	}
	return paths, nil
}

// UserKubeconfig provisions a user with the given name and groups and
// returns a kubeconfig for it whose current context has namespace ("" for
// none). The user has no permissions beyond what RBAC objects grant it.
func (e *Env) UserKubeconfig(name string, groups []string, namespace string) ([]byte, error) {
	user, err := e.env.AddUser(crenvtest.User{Name: name, Groups: groups}, rest.CopyConfig(e.Config))
	if err != nil {
		return nil, fmt.Errorf("failed to provision user %s: %w", name, err)
	}
	return kubeconfigFor(user.Config(), namespace)
}

// TokenKubeconfig returns a kubeconfig that reaches this API server with a
// bearer token (e.g. one issued for a ServiceAccount) instead of the admin
// certificate. Its current context has namespace ("" for none).
func (e *Env) TokenKubeconfig(token, namespace string) ([]byte, error) {
	cfg := rest.AnonymousClientConfig(e.Config)
	cfg.BearerToken = token
	return kubeconfigFor(cfg, namespace)
}
