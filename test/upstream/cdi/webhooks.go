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
	"syscall"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
	snapclient "github.com/kubernetes-csi/external-snapshotter/client/v6/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	"kubevirt.io/containerized-data-importer/pkg/apiserver"
	"kubevirt.io/containerized-data-importer/pkg/apiserver/webhooks"
	cdiclient "kubevirt.io/containerized-data-importer/pkg/client/clientset/versioned"
	"kubevirt.io/containerized-data-importer/pkg/keys"
	cdicluster "kubevirt.io/containerized-data-importer/pkg/operator/resources/cluster"
)

// CDI's webhook paths, as cdi-apiserver serves them and the configurations
// cdi-operator writes name them.
const (
	dataVolumeValidatePath     = "/datavolume-validate"
	dataVolumeMutatePath       = "/datavolume-mutate"
	cdiValidatePath            = "/cdi-validate"
	objectTransferValidatePath = "/objecttransfer-validate"
	dataImportCronValidatePath = "/dataimportcron-validate"
	populatorValidatePath      = "/populator-validate"
)

// runWebhooks serves cdi-apiserver's admission webhooks with CDI's own
// handlers and the clients and clone-token signing key cdi-apiserver gives
// them (the key from the Secret cdi-apiserver keeps in -namespace, created
// the way cdi-apiserver creates it), against the API server of
// -kubeconfig. Left out of cdi-apiserver are its TLS and authentication
// plumbing (the API server calls the webhooks by URL with a CA bundle), its
// upload-token API, and the informer cache in front of the client that
// looks at a PersistentVolumeClaim already named like a new DataVolume: here
// that client reads from the API server.
func runWebhooks(args []string) error {
	fs := flag.NewFlagSet("webhooks", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "the kubeconfig of the API server whose requests are admitted")
	namespace := fs.String("namespace", "cdi", "the namespace cdi-apiserver runs in (its signing key Secret lives there)")
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

	mux, err := newWebhookMux(*kubeconfig, *namespace)
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
	// The caller waits for this line before it registers the webhooks.
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

// newWebhookMux builds cdi-apiserver's clients and signing key and routes
// CDI's webhook paths to CDI's handlers.
func newWebhookMux(kubeconfig, namespace string) (*http.ServeMux, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("failed to load %s: %w", kubeconfig, err)
	}
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create the Kubernetes client: %w", err)
	}
	cdiClient, err := cdiclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create the CDI client: %w", err)
	}
	snapClient, err := snapclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create the snapshot client: %w", err)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(corev1.AddToScheme(scheme))
	utilruntime.Must(cdiv1.AddToScheme(scheme))
	utilruntime.Must(snapshotv1.AddToScheme(scheme))
	crClient, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("failed to create the controller-runtime client: %w", err)
	}
	signingKey, err := keys.GetOrCreatePrivateKey(kubeClient, namespace, apiserver.APISigningKeySecretName, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to get or create cdi-apiserver's signing key: %w", err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.Handle(dataVolumeValidatePath, webhooks.NewDataVolumeValidatingWebhook(kubeClient, cdiClient, snapClient, crClient))
	mux.Handle(dataVolumeMutatePath, webhooks.NewDataVolumeMutatingWebhook(kubeClient, cdiClient, signingKey))
	mux.Handle(cdiValidatePath, webhooks.NewCDIValidatingWebhook(cdiClient))
	mux.Handle(objectTransferValidatePath, webhooks.NewObjectTransferValidatingWebhook(kubeClient, cdiClient))
	mux.Handle(dataImportCronValidatePath, webhooks.NewDataImportCronValidatingWebhook(kubeClient, cdiClient))
	mux.Handle(populatorValidatePath, webhooks.NewPopulatorValidatingWebhook(kubeClient, cdiClient))
	return mux, nil
}

// runWebhookConfigurations prints the webhook configurations cdi-operator
// writes for cdi-apiserver (without the upload API's APIService), pointing
// at cdi-apiserver's Service in -namespace and without a CA bundle.
func runWebhookConfigurations(args []string) error {
	fs := flag.NewFlagSet("webhook-configurations", flag.ContinueOnError)
	namespace := fs.String("namespace", "cdi", "the namespace cdi-apiserver runs in")
	if err := fs.Parse(args); err != nil {
		return err
	}
	objs, err := cdicluster.CreateDynamicResourceGroup("apiserver-registrations", &cdicluster.FactoryArgs{Namespace: *namespace})
	if err != nil {
		return fmt.Errorf("failed to generate cdi-apiserver's registrations: %w", err)
	}
	var kept []client.Object
	for _, obj := range objs {
		switch obj.GetObjectKind().GroupVersionKind().Kind {
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			kept = append(kept, obj)
		}
	}
	return write(objects(kept))
}
