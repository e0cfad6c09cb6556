package simulator

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Options tune the simulated infra cluster.
type Options struct {
	// Nodes are the infra nodes; NodeName and SecondNodeName when empty.
	// The i-th is in zone Zones[i%3] of region Region.
	Nodes []string
	// NodeCapacity is what each infra node offers; DefaultNodeCapacity
	// when nil. kube-scheduler places pods only where their requests fit.
	NodeCapacity corev1.ResourceList
	// VirtHandler returns the REST config of the virt-handler of a node
	// (envtest.Env.VirtHandlerConfig); the simulated virt-handlers act
	// with it. Required.
	VirtHandler func(ctx context.Context, node string) (*rest.Config, error)
	// Provisioners are the provisioner names whose volumes the simulated
	// provisioner makes; rancher.io/local-path when empty.
	Provisioners []string
	// StartDelay is how long a guest takes to boot once its VMI is
	// scheduled.
	StartDelay time.Duration
	// ImportDelay is how long a CDI transfer (import, clone) takes.
	ImportDelay time.Duration
	// UserClient, when set, plays the kubelets of the guests in the user
	// cluster: a Ready Node per running guest (named like the VM, labelled
	// LabelGuest, InternalIP the guest's address, no spec.providerID, as
	// with an external cloud provider), removed once the VM is gone or
	// being deleted.
	UserClient ctrlruntimeclient.Client
	// ServingCertificates, when set, is an admin configuration of the user
	// cluster with which each guest's kubelet, once its Node is
	// registered, requests a serving certificate as its Node, as kubelets
	// with serverTLSBootstrap do (CertificateSigningRequest
	// ServingCSRName(node), signer kubernetes.io/kubelet-serving).
	ServingCertificates *rest.Config
	// ImportHTTP makes CDI's simulated importer really download an HTTP
	// source before it succeeds (a failed download is retried), so an image
	// server in the test sees every import.
	ImportHTTP bool
	// HTTPClient downloads the images when ImportHTTP is set;
	// http.DefaultClient when nil.
	HTTPClient *http.Client
}

// DefaultProvisioner is the provisioner whose volumes the simulator makes
// unless Options.Provisioners names others.
const DefaultProvisioner = "rancher.io/local-path"

func (o Options) withDefaults() Options {
	if len(o.Nodes) == 0 {
		o.Nodes = []string{NodeName, SecondNodeName}
	}
	if len(o.Provisioners) == 0 {
		o.Provisioners = []string{DefaultProvisioner}
	}
	if o.NodeCapacity == nil {
		o.NodeCapacity = DefaultNodeCapacity()
	}
	return o
}

// Add registers the simulator with a manager of the infra cluster (admin
// credentials). It registers the infra nodes at once.
func Add(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	opts = opts.withDefaults()
	if opts.VirtHandler == nil {
		return errors.New("simulator: Options.VirtHandler is required")
	}
	direct, err := ctrlruntimeclient.New(mgr.GetConfig(), ctrlruntimeclient.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	if err := createInfraNodes(ctx, direct, opts.Nodes, opts.NodeCapacity); err != nil {
		return err
	}
	c := mgr.GetClient()
	if err := addPodControllers(mgr, c, opts); err != nil {
		return err
	}
	if err := addStorage(mgr, c, opts.Provisioners); err != nil {
		return err
	}
	for _, node := range opts.Nodes {
		if err := addVirtHandler(ctx, mgr, node, opts); err != nil {
			return err
		}
	}
	if opts.UserClient == nil {
		return nil
	}
	return newController(mgr, "simulator-guests").
		For(&kubevirtcorev1.VirtualMachine{}).
		Owns(&kubevirtcorev1.VirtualMachineInstance{}).
		Complete(&guests{infra: c, user: opts.UserClient, servingCertificates: opts.ServingCertificates})
}

// newController starts a controller builder; tests run several simulators
// in one process.
func newController(mgr ctrl.Manager, name string) *builder.Builder {
	return ctrl.NewControllerManagedBy(mgr).Named(name).
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true)})
}

// addPodControllers registers the kubelets. kube-scheduler binds the pods
// (test/envtest WithScheduler).
func addPodControllers(mgr ctrl.Manager, c ctrlruntimeclient.Client, opts Options) error {
	cdi := &cdiPrograms{client: c, delay: opts.ImportDelay, importHTTP: opts.ImportHTTP, httpClient: opts.HTTPClient}
	programs := cdi.programs()
	for image, p := range (&launcher{client: c}).programs() {
		programs[image] = p
	}
	k := &kubelet{client: c, nodes: opts.Nodes, programs: programs}
	bound := predicate.NewPredicateFuncs(func(obj ctrlruntimeclient.Object) bool {
		return slices.Contains(opts.Nodes, obj.(*corev1.Pod).Spec.NodeName)
	})
	return newController(mgr, "simulator-kubelet").For(&corev1.Pod{}, builder.WithPredicates(bound)).
		Watches(&kubevirtcorev1.VirtualMachineInstance{}, handler.EnqueueRequestsFromMapFunc(launcherPodsOf(c))).
		Complete(k)
}

// launcherPodsOf maps a VMI to its virt-launcher pods, whose program
// follows the VMI.
func launcherPodsOf(c ctrlruntimeclient.Reader) handler.MapFunc {
	return func(ctx context.Context, obj ctrlruntimeclient.Object) []reconcile.Request {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, ctrlruntimeclient.InNamespace(obj.GetNamespace()),
			ctrlruntimeclient.MatchingLabels{kubevirtcorev1.CreatedByLabel: string(obj.GetUID())}); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(pods.Items))
		for _, pod := range pods.Items {
			out = append(out, reconcile.Request{NamespacedName: ctrlruntimeclient.ObjectKeyFromObject(&pod)})
		}
		return out
	}
}

// addStorage registers the volume provisioner and reclaimer.
func addStorage(mgr ctrl.Manager, c ctrlruntimeclient.Client, names []string) error {
	p := &provisioner{client: c, names: names}
	if err := newController(mgr, "simulator-provisioner").For(&corev1.PersistentVolumeClaim{}).Complete(p); err != nil {
		return err
	}
	return newController(mgr, "simulator-volume-reclaimer").For(&corev1.PersistentVolume{}).
		Complete(&volumeReclaimer{client: c, names: p.ours})
}

// addVirtHandler registers the virt-handler of a node: a cluster with its
// identity, its VMI controller and its node heartbeat.
func addVirtHandler(ctx context.Context, mgr ctrl.Manager, node string, opts Options) error {
	cfg, err := opts.VirtHandler(ctx, node)
	if err != nil {
		return fmt.Errorf("failed to get the identity of node %s's virt-handler: %w", node, err)
	}
	cl, err := cluster.New(cfg, func(o *cluster.Options) { o.Scheme = mgr.GetScheme() })
	if err != nil {
		return err
	}
	if err := mgr.Add(cl); err != nil {
		return err
	}
	h := &virtHandler{node: node, client: cl.GetClient(), vmis: cl.GetCache(), admin: mgr.GetClient(), startDelay: opts.StartDelay}
	err = newController(mgr, "simulator-virt-handler-"+node).
		WatchesRawSource(source.Kind(cl.GetCache(), &kubevirtcorev1.VirtualMachineInstance{},
			&handler.TypedEnqueueRequestForObject[*kubevirtcorev1.VirtualMachineInstance]{})).
		Complete(h)
	if err != nil {
		return err
	}
	return mgr.Add(&handlerNode{node: node, client: cl.GetClient()})
}

// IPFor is the pod-network address the simulator gives a VM's guest (and a
// pod): stable for a namespace/name, inside 10.244.0.0/16.
func IPFor(namespace, name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace + "/" + name))
	sum := h.Sum32()
	return fmt.Sprintf("10.244.%d.%d", (sum>>8)%256, sum%254+1)
}

// macFor is the MAC address of a guest's interface: stable, locally
// administered.
func macFor(namespace, name, iface string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace + "/" + name + "/" + iface))
	sum := h.Sum32()
	return fmt.Sprintf("02:00:%02x:%02x:%02x:%02x", sum>>24, (sum>>16)&0xff, (sum>>8)&0xff, sum&0xff)
}
