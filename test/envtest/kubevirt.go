package envtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// KubeVirtNamespace is where the KubeVirt CR and KubeVirt's components live,
// as kubevirt-installer installs them.
const KubeVirtNamespace = "kubevirt"

// kubeVirtStartTimeout bounds the start of KubeVirt's components.
const kubeVirtStartTimeout = 2 * time.Minute

// WithKubeVirt makes the control plane a KubeVirt infra cluster as far as
// KubeVirt's own code runs without nodes: the KubeVirt CR that
// kubevirt-installer's kubevirt chart renders by default (its feature gates
// and configuration), marked Deployed as virt-operator would, virt-api's
// admission webhooks served by KubeVirt's own handlers (KubeVirtTool
// webhooks) under virt-api's RBAC, registered with the webhook
// configurations KubeVirt generates, and the admission policy that
// restricts virt-handler's writes to its own Node. Every VirtualMachine,
// VMI, instancetype, migration or virt-launcher eviction sent to this API
// server is then defaulted and validated by KubeVirt v1.9.0. As on an
// infra cluster kubevirt-installer sets up, CDI's admission runs too (see
// WithCDIController): every DataVolume is judged by CDI v1.65.0.
func WithKubeVirt() Option {
	return func(o *options) { o.kubeVirt = true }
}

// WithVirtController also runs KubeVirt's virt-controller (implies
// WithKubeVirt) under the RBAC KubeVirt generates for it: VMs get VMIs and
// DataVolumes, VMIs get virt-launcher pods, deletions pass KubeVirt's
// finalizers. Nothing runs the pods; a test plays the kubelets and
// virt-handler.
func WithVirtController() Option {
	return func(o *options) { o.kubeVirt, o.virtController = true, true }
}

// kubeVirtComponent is the identity of one of KubeVirt's components.
func kubeVirtComponent(component, serviceAccount string) identity {
	return identity{
		tool: KubeVirtTool, rbacArgs: []string{"rbac", "-component", component, "-namespace", KubeVirtNamespace},
		namespace: KubeVirtNamespace, name: serviceAccount,
	}
}

var (
	virtControllerIdentity = kubeVirtComponent("controller", "kubevirt-controller")
	virtHandlerIdentity    = kubeVirtComponent("handler", "kubevirt-handler")
)

// VirtControllerConfig returns a REST config that acts as virt-controller's
// ServiceAccount, with the RBAC KubeVirt generates for it, for tests that
// write what virt-controller writes (a VMI's status among them: KubeVirt's
// admission drops VMI status changes of anybody but its own components).
func (e *Env) VirtControllerConfig(ctx context.Context) (*rest.Config, error) {
	cfg, _, err := e.componentConfig(ctx, virtControllerIdentity, nil)
	return cfg, err
}

// VirtHandlerConfig returns a REST config that acts as the virt-handler of
// node: KubeVirt's RBAC for virt-handler, and a token bound to a virt-handler
// Pod on the node, so that KubeVirt's node restriction lets it change only
// the VMIs on that node. The Pod is created when missing; nothing runs it.
func (e *Env) VirtHandlerConfig(ctx context.Context, node string) (*rest.Config, error) {
	images, err := chartImages("kubevirt")
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: KubeVirtNamespace, Name: "virt-handler-" + node,
			Labels: map[string]string{kubevirtcorev1.AppLabel: "virt-handler"}},
		Spec: corev1.PodSpec{
			NodeName: node, ServiceAccountName: virtHandlerIdentity.name,
			Containers: []corev1.Container{{Name: "virt-handler", Image: images["handler"]}},
		},
	}
	err = e.Client.Create(ctx, pod)
	if apierrors.IsAlreadyExists(err) {
		err = e.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(pod), pod)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to create the virt-handler Pod of node %s: %w", node, err)
	}
	cfg, _, err := e.componentConfig(ctx, virtHandlerIdentity, pod)
	return cfg, err
}

// startKubeVirt installs the KubeVirt CR and starts the webhooks and, when
// asked, virt-controller.
func (e *Env) startKubeVirt(ctx context.Context, o options) error {
	ctx, cancel := context.WithTimeout(ctx, kubeVirtStartTimeout)
	defer cancel()
	if err := e.ensureNamespace(ctx, KubeVirtNamespace); err != nil {
		return err
	}
	if err := e.installKubeVirtCR(ctx); err != nil {
		return err
	}
	if err := e.startKubeVirtWebhooks(ctx); err != nil {
		return err
	}
	policies, err := Generate(ctx, KubeVirtTool, "admission-policies", "-namespace", KubeVirtNamespace)
	if err != nil {
		return err
	}
	if err := e.createAll(ctx, policies); err != nil {
		return err
	}
	if o.virtController {
		return e.startVirtController(ctx)
	}
	return nil
}

// installKubeVirtCR creates the KubeVirt CR of the kubevirt chart with the
// status virt-operator gives a deployed KubeVirt; KubeVirt's components read
// their configuration only from a CR with a phase.
func (e *Env) installKubeVirtCR(ctx context.Context) error {
	kv, err := ChartObject("kubevirt", "KubeVirt")
	if err != nil {
		return err
	}
	if err := e.Client.Create(ctx, kv); err != nil {
		return fmt.Errorf("failed to create the KubeVirt CR: %w", err)
	}
	status := map[string]any{
		"phase":                   string(kubevirtcorev1.KubeVirtPhaseDeployed),
		"defaultArchitecture":     "amd64",
		"observedKubeVirtVersion": kubeVirtVersion,
		"targetKubeVirtVersion":   kubeVirtVersion,
		"conditions": []any{map[string]any{
			"type": "Available", "status": "True", "reason": "AllComponentsReady",
			"message": "All components are ready.",
		}},
	}
	if err := unstructured.SetNestedField(kv.Object, status, "status"); err != nil {
		return err
	}
	if err := e.Client.Status().Update(ctx, kv); err != nil {
		return fmt.Errorf("failed to mark the KubeVirt CR deployed: %w", err)
	}
	return nil
}

// startKubeVirtWebhooks serves virt-api's admission webhooks and registers
// them with a CA bundle, then waits until the API server calls them.
func (e *Env) startKubeVirtWebhooks(ctx context.Context) error {
	base, caBundle, err := e.serveUpstreamWebhooks(ctx, upstreamWebhooks{
		name: "virt-api-webhooks", tool: KubeVirtTool, namespace: KubeVirtNamespace,
		identity: kubeVirtComponent("api", "kubevirt-apiserver"),
	})
	if err != nil {
		return err
	}
	if e.kubeVirtTool, err = newToolClient(base, caBundle); err != nil {
		return err
	}
	return e.waitAdmission(ctx)
}

// servingCert writes a self-signed serving certificate for 127.0.0.1 into
// a directory of its own and returns its files and CA bundle. The
// directory holds nothing else: KubeVirt's components watch the directory
// of their certificate with inotify and reload it on every event, so a log
// file written beside it made virt-controller reload and log in a loop
// (a thousand times a second, a whole CPU core while idle).
func (e *Env) servingCert(name string) (certFile, keyFile string, caBundle []byte, err error) {
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		return "", "", nil, fmt.Errorf("failed to generate a serving certificate: %w", err)
	}
	dir := filepath.Join(e.workDir, name+"-certs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", "", nil, fmt.Errorf("failed to create the certificate directory of %s: %w", name, err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return "", "", nil, err
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return "", "", nil, err
	}
	return certFile, keyFile, certPEM, nil
}

// waitAdmission waits until the API server calls both KubeVirt webhooks: a
// dry-run VM comes back with a firmware UUID (mutation) and one with an
// unknown run strategy is refused (validation).
func (e *Env) waitAdmission(ctx context.Context) error {
	probe := func(runStrategy kubevirtcorev1.VirtualMachineRunStrategy) *kubevirtcorev1.VirtualMachine {
		vm := NewVM(metav1.NamespaceDefault, "admission-probe")
		vm.Spec.RunStrategy = ptr.To(runStrategy)
		return vm
	}
	err := poll.Wait(ctx, kubeVirtStartTimeout, func() error {
		vm := probe(kubevirtcorev1.RunStrategyHalted)
		if err := e.Client.Create(ctx, vm, ctrlruntimeclient.DryRunAll); err != nil {
			return fmt.Errorf("a valid VM was refused: %w", err)
		}
		if fw := vm.Spec.Template.Spec.Domain.Firmware; fw == nil || fw.UUID == "" {
			return errors.New("the mutating webhook has not run")
		}
		err := e.Client.Create(ctx, probe("Sometimes"), ctrlruntimeclient.DryRunAll)
		if err == nil {
			return errors.New("the validating webhook has not run (an invalid VM was admitted)")
		}
		if !strings.Contains(err.Error(), "virtualmachine-validator.kubevirt.io") {
			return fmt.Errorf("the validating webhook has not run: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("KubeVirt's admission did not take effect: %w", errors.Join(err, e.ComponentErrors()))
	}
	return nil
}

// startVirtController runs virt-controller as its ServiceAccount and waits
// until it leads.
func (e *Env) startVirtController(ctx context.Context) error {
	_, kubeconfig, err := e.componentConfig(ctx, virtControllerIdentity, nil)
	if err != nil {
		return err
	}
	images, err := chartImages("kubevirt")
	if err != nil {
		return err
	}
	certFile, keyFile, _, err := e.servingCert("virt-controller")
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	err = e.startComponent(ctx, processSpec{
		name: "virt-controller", path: VirtController,
		args: []string{"--kubeconfig", kubeconfig,
			"--launcher-image", images["launcher"], "--exporter-image", images["exportServer"],
			"--listen", "127.0.0.1", "--port", fmt.Sprint(port),
			"--prom-cert-file", certFile, "--prom-key-file", keyFile},
		startGrace: time.Second,
		// virt-controller exits when it loses its lease, as during an
		// API server restart; its Deployment's pod would restart.
		restartOnExit: true,
	})
	if err != nil {
		return err
	}
	return e.waitLeader(ctx, KubeVirtNamespace, "virt-controller")
}

// waitLeader waits until a component holds its leader-election Lease.
func (e *Env) waitLeader(ctx context.Context, namespace, name string) error {
	err := poll.Wait(ctx, kubeVirtStartTimeout, func() error {
		if err := e.ComponentErrors(); err != nil {
			return poll.Final(err)
		}
		lease := &coordinationv1.Lease{}
		if err := e.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}, lease); err != nil {
			return fmt.Errorf("no lease yet: %w", err)
		}
		if ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
			return errors.New("the lease has no holder")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s did not take its leader lease %s/%s: %w", name, namespace, name, err)
	}
	return nil
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("failed to find a free port: %w", err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
