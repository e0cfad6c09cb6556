package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/clientcmd"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	v1 "kubevirt.io/api/core/v1"
	"kubevirt.io/client-go/kubecli"

	"kubevirt.io/kubevirt/pkg/controller"
	netadmitter "kubevirt.io/kubevirt/pkg/network/admitter"
	"kubevirt.io/kubevirt/pkg/virt-api/webhooks"
	mutating "kubevirt.io/kubevirt/pkg/virt-api/webhooks/mutating-webhook"
	validating "kubevirt.io/kubevirt/pkg/virt-api/webhooks/validating-webhook"
	virtconfig "kubevirt.io/kubevirt/pkg/virt-config"
	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/components"
)

// runWebhooks serves virt-api's admission webhooks with virt-api's own
// handlers, cluster configuration (the KubeVirt CR in -namespace, read
// through an informer like virt-api does) and informers, against the API
// server of -kubeconfig. Only the TLS and authentication plumbing of virt-api
// is left out: the API server calls the webhooks by URL with a CA bundle.
// The same server answers dataVolumesPath (see serveDataVolumes).
func runWebhooks(args []string) error {
	fs := flag.NewFlagSet("webhooks", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "the kubeconfig of the API server whose requests are admitted")
	namespace := fs.String("namespace", "kubevirt", "the namespace of the KubeVirt CR (KubeVirt's install namespace)")
	listen := fs.String("listen", "127.0.0.1:0", "the address to serve on")
	certFile := fs.String("tls-cert", "", "the serving certificate (PEM)")
	keyFile := fs.String("tls-key", "", "the serving key (PEM)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kubeconfig == "" || *certFile == "" || *keyFile == "" {
		return errors.New("-kubeconfig, -tls-cert and -tls-key are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	mux, err := newWebhookMux(ctx, *kubeconfig, *namespace)
	if err != nil {
		return err
	}
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		return fmt.Errorf("failed to load the serving certificate: %w", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("failed to listen on %s: %w", *listen, err)
	}
	server := &http.Server{
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	// The address goes to stdout once the informers have synced: the caller
	// waits for this line before it registers the webhooks.
	fmt.Printf("serving on %s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- server.ServeTLS(ln, "", "") }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return server.Shutdown(shutdown)
	}
}

// newWebhookMux builds virt-api's clients, informers and cluster
// configuration, waits for the informers, and routes virt-api's webhook
// paths to virt-api's handlers.
func newWebhookMux(ctx context.Context, kubeconfig, namespace string) (*http.ServeMux, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("failed to load %s: %w", kubeconfig, err)
	}
	virtCli, err := kubecli.GetKubevirtClientFromRESTConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create the KubeVirt client: %w", err)
	}
	aggregator, err := aggregatorclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create the aggregator client: %w", err)
	}
	factory := controller.NewKubeInformerFactory(virtCli.RestClient(), virtCli, virtCli, aggregator, namespace)
	kubeVirtInformer := factory.KubeVirt()
	crdInformer := factory.CRD()
	informers := &webhooks.Informers{
		VMIPresetInformer: factory.VirtualMachinePreset(),
		VMRestoreInformer: factory.VirtualMachineRestore(),
		VMBackupInformer:  factory.VirtualMachineBackup(),
		NamespaceInformer: factory.Namespace(),
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	clusterConfig, err := virtconfig.NewClusterConfig(crdInformer, kubeVirtInformer, namespace)
	if err != nil {
		return nil, fmt.Errorf("failed to read the cluster configuration: %w", err)
	}
	if err := checkConfigAccepted(clusterConfig); err != nil {
		return nil, err
	}
	if clusterConfig.HasDataSourceAPI() {
		informers.DataSourceInformer = factory.DataSource()
	} else {
		informers.DataSourceInformer = factory.DummyDataSource()
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	accounts := webhooks.KubeVirtServiceAccounts(namespace)
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc(dataVolumesPath, serveDataVolumes(virtCli))
	for path, serve := range validatingHandlers(clusterConfig, virtCli, informers, accounts) {
		mux.HandleFunc(path, serve)
	}
	for path, serve := range mutatingHandlers(clusterConfig, virtCli, informers, accounts) {
		mux.HandleFunc(path, serve)
	}
	return mux, nil
}

type handlers map[string]func(http.ResponseWriter, *http.Request)

// validatingHandlers maps virt-api's validating webhook paths to its
// handlers, with the arguments virt-api passes.
func validatingHandlers(cc *virtconfig.ClusterConfig, cli kubecli.KubevirtClient, inf *webhooks.Informers, sa map[string]struct{}) handlers {
	vmiSpecValidator := func(p *field.Path, spec *v1.VirtualMachineInstanceSpec, cc *virtconfig.ClusterConfig) []metav1.StatusCause {
		return netadmitter.Validate(p, spec, cc)
	}
	return handlers{
		components.VMICreateValidatePath: func(w http.ResponseWriter, r *http.Request) {
			validating.ServeVMICreate(w, r, cc, sa, vmiSpecValidator)
		},
		components.VMIUpdateValidatePath: func(w http.ResponseWriter, r *http.Request) { validating.ServeVMIUpdate(w, r, cc, sa) },
		components.VMValidatePath:        func(w http.ResponseWriter, r *http.Request) { validating.ServeVMs(w, r, cc, cli, inf, sa) },
		components.VMIRSValidatePath:     func(w http.ResponseWriter, r *http.Request) { validating.ServeVMIRS(w, r, cc) },
		components.VMPoolValidatePath:    func(w http.ResponseWriter, r *http.Request) { validating.ServeVMPool(w, r, cc, sa) },
		components.VMIPresetValidatePath: validating.ServeVMIPreset,
		components.MigrationCreateValidatePath: func(w http.ResponseWriter, r *http.Request) {
			validating.ServeMigrationCreate(w, r, cc, cli, sa)
		},
		components.MigrationUpdateValidatePath:       validating.ServeMigrationUpdate,
		components.VMSnapshotValidatePath:            func(w http.ResponseWriter, r *http.Request) { validating.ServeVMSnapshots(w, r, cc, cli) },
		components.VMRestoreValidatePath:             func(w http.ResponseWriter, r *http.Request) { validating.ServeVMRestores(w, r, cc, cli, inf) },
		components.VMBackupValidatePath:              func(w http.ResponseWriter, r *http.Request) { validating.ServeVMBackups(w, r, cc, cli, inf) },
		components.VMBackupTrackerValidatePath:       func(w http.ResponseWriter, r *http.Request) { validating.ServeVMBackupTrackers(w, r, cc) },
		components.VMExportValidatePath:              func(w http.ResponseWriter, r *http.Request) { validating.ServeVMExports(w, r, cc) },
		components.VMInstancetypeValidatePath:        validating.ServeVmInstancetypes,
		components.VMClusterInstancetypeValidatePath: validating.ServeVmClusterInstancetypes,
		components.VMPreferenceValidatePath:          validating.ServeVmPreferences,
		components.VMClusterPreferenceValidatePath:   validating.ServeVmClusterPreferences,
		components.StatusValidatePath: func(w http.ResponseWriter, r *http.Request) {
			validating.ServeStatusValidation(w, r, cc, cli, inf, sa)
		},
		components.PodEvictionValidatePath: func(w http.ResponseWriter, r *http.Request) {
			validating.ServePodEvictionInterceptor(w, r, cc, cli)
		},
		components.MigrationPolicyCreateValidatePath: func(w http.ResponseWriter, r *http.Request) { validating.ServeMigrationPolicies(w, r, cc) },
		components.VMCloneCreateValidatePath: func(w http.ResponseWriter, r *http.Request) {
			validating.ServeVirtualMachineClones(w, r, cc, cli)
		},
		components.PluginValidatePath: func(w http.ResponseWriter, r *http.Request) { validating.ServePlugins(w, r, cc) },
	}
}

// mutatingHandlers maps virt-api's mutating webhook paths to its handlers.
func mutatingHandlers(cc *virtconfig.ClusterConfig, cli kubecli.KubevirtClient, inf *webhooks.Informers, sa map[string]struct{}) handlers {
	return handlers{
		components.VMMutatePath:            func(w http.ResponseWriter, r *http.Request) { mutating.ServeVMs(w, r, cc, cli) },
		components.VMIMutatePath:           func(w http.ResponseWriter, r *http.Request) { mutating.ServeVMIs(w, r, cc, inf, sa) },
		components.MigrationMutatePath:     mutating.ServeMigrationCreate,
		components.VMCloneCreateMutatePath: mutating.ServeClones,
		components.VirtLauncherPodMutatePath: func(w http.ResponseWriter, r *http.Request) {
			mutating.ServeVirtLauncherPods(w, r, cc, cli)
		},
	}
}

// checkConfigAccepted fails when there is no KubeVirt CR to read the
// configuration from, or when KubeVirt refuses its configuration: virt-api
// then runs with its defaults and logs why, so feature gates the CR enables
// would silently be off.
func checkConfigAccepted(cc *virtconfig.ClusterConfig) error {
	kv := cc.GetConfigFromKubeVirtCR()
	if kv == nil {
		return errors.New("no KubeVirt CR with a status phase in the namespace")
	}
	var want, got []string
	if dev := kv.Spec.Configuration.DeveloperConfiguration; dev != nil {
		want = dev.FeatureGates
	}
	if dev := cc.GetConfig().DeveloperConfiguration; dev != nil {
		got = dev.FeatureGates
	}
	if !slices.Equal(want, got) {
		return fmt.Errorf("KubeVirt refuses the configuration of KubeVirt CR %s (feature gates %v in effect, %v requested); its log above says why", kv.Name, got, want)
	}
	return nil
}
