package machine

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/coreevents"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/metrics"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ControllerName names the controller, its events and its logger.
const ControllerName = "machine-controller"

// Finalizers the controller puts on every Machine before creating its
// instance; Kubermatic's machine-controller uses the same names, so Machines
// can move between the two.
const (
	// FinalizerDelete is removed once the provider cleaned up the instance.
	FinalizerDelete = "machine-delete-finalizer"
	// FinalizerNodeDelete is removed once the Machine's Node is deleted.
	FinalizerNodeDelete = "machine-node-delete-finalizer"
)

// Fixed waits, used only where no watch event will come.
const (
	// pollNoWatch is how often a Machine is looked at while its instance
	// has no address yet and the infra namespace it lives in has no synced
	// watch (see infraWatches).
	pollNoWatch = 15 * time.Second
	// pollCleanup is how often Cleanup is repeated until it reports done:
	// DataVolumes and Secrets on the infra cluster are not watched.
	pollCleanup = 2 * time.Second
)

// Options configure the Machine controller.
type Options struct {
	// Provider creates and deletes instances. Required.
	Provider cloudprovider.Provider
	// Log is passed to provider calls; zap.NewNop when nil.
	Log *zap.SugaredLogger
	// Queue holds the number of workers and the retry backoff.
	Queue queue.Options
	// InfraClients, when set, are the provider's infra clients: the infra
	// namespace of every Machine whose instance names its infra client
	// (the KubeVirt provider's do) is watched through them, from the first
	// reconcile of such a Machine until the last one is gone (see
	// infraWatches). Without them, or for other instances, the controller
	// polls while it waits for an instance's address.
	InfraClients *infra.Clients
	// InfraPinned, when set, is an infra client of InfraClients whose
	// namespace is watched from the start and also while no Machine uses
	// it (the --infra-kubeconfig pair).
	InfraPinned *infra.Client
	// DrainTimeout bounds the drain of a deleted Machine's Node, counted
	// from the Machine's deletion; DefaultDrainTimeout when 0, no drain
	// when negative.
	DrainTimeout time.Duration
	// JoinTimeout, when positive, is how long a Machine of a MachineSet may
	// go without a Node (counted from its creation) before it is deleted
	// and so replaced.
	JoinTimeout time.Duration
	// StoppedGrace is how long a Machine's instance may be down (stopped,
	// in an unknown state, or starting again after the Machine had a
	// Node) before a Machine of a MachineSet is deleted and so replaced;
	// DefaultStoppedGrace when 0, never when negative.
	StoppedGrace time.Duration
	// InfraNodeLabels, when its name is set, is a ConfigMap of the user
	// cluster whose key "labels" lists label keys to copy from the infra
	// node a Machine's VM runs on to the Machine's Node (see
	// infraNodeLabels), for Machines whose instance names its infra client.
	InfraNodeLabels types.NamespacedName
	// ProviderID, when set, returns the spec.providerID the Node of a
	// Machine's instance will carry, known before the instance exists
	// (KubeVirt: kubevirt://<VM>, the VM named like the Machine). A Machine
	// whose instance this controller creates then gets it in the patch
	// that adds the finalizers, instead of in a patch of its own once its
	// Node joins.
	ProviderID func(*clusterv1alpha1.Machine) string
	// Name selects the Machines of this controller: those whose label
	// LabelController equals it; "" selects the Machines without the
	// label. Kubermatic's machine-controller has the same -name flag, so
	// both can run side by side on disjoint Machines.
	Name string

	// pollNoWatch replaces the constant in tests; 0 takes it.
	pollNoWatch time.Duration
}

// LabelController on a Machine names the machine-controller that handles
// it (see Options.Name).
const LabelController = "machine.k8s.io/controller"

// AnnotationInitializers on a Machine, while not empty, keeps every
// machine-controller away from it: something else prepares the Machine
// first.
const AnnotationInitializers = "machine-controller.kubermatic.io/initializers"

// reconciler reconciles Machines.
type reconciler struct {
	client   ctrlruntimeclient.Client
	provider cloudprovider.Provider
	log      *zap.SugaredLogger
	recorder events.EventRecorder
	// pods lists pods by Node from the API server: the controller does not
	// cache every pod of the cluster.
	pods ctrlruntimeclient.Reader
	// secrets reads the operating-system-manager bootstrap Secrets.
	secrets secretGetter
	// drainTimeout bounds drains; negative disables them.
	drainTimeout time.Duration
	// joinTimeout replaces Machines whose Node does not join; 0 disables.
	joinTimeout time.Duration
	// stoppedGrace bounds how long an instance may be down; negative
	// disables replacements.
	stoppedGrace time.Duration
	// watches watches the Machines' infra namespaces; nil without
	// Options.InfraClients.
	watches *infraWatches
	// pollNoWatch is the wait for an address of an instance whose infra
	// namespace has no synced watch.
	pollNoWatch time.Duration
	// infraLabels copies infra node labels to Nodes; nil when off.
	infraLabels *infraNodeLabels
	// now is the clock.
	now func() time.Time
	// name is the controller name Machines must carry (Options.Name).
	name string
	// writes holds the controller's own last write of each Machine, so a
	// reconcile does not repeat it from a cache that lags behind it.
	writes ownWrites
	// statusWrites sends status writes where the Machine CRD takes them.
	statusWrites statusWrites
	// creates holds the controller's own instance creations the
	// provider's cache does not show yet, so they are not repeated.
	creates ownCreates
	// providerID is Options.ProviderID; nil when unknown before creation.
	providerID func(*clusterv1alpha1.Machine) string
	// evacuations counts evacuations by policy and outcome.
	evacuations *prometheus.CounterVec
	// migrations holds the live migrations reported, so each is
	// reported once.
	migrations reportedOnce[migrationKey]
	// waits holds the reasons for not running yet reported, so each is
	// reported once per Machine.
	waits reportedOnce[waitKey]
}

// Add registers the Machine controller with mgr.
func Add(mgr ctrl.Manager, opts Options) error {
	if opts.Provider == nil {
		return fmt.Errorf("machine controller needs a provider")
	}
	r := newReconciler(mgr, opts)
	secrets := newBootstrapSecrets(mgr, r.log)
	if err := mgr.Add(secrets); err != nil {
		return fmt.Errorf("failed to add the bootstrap Secret reader: %w", err)
	}
	r.secrets = secrets
	if err := addIndexes(context.Background(), mgr); err != nil {
		return err
	}
	// The provider's labels of every Machine, on the metrics endpoint.
	if err := metrics.RegisterMachineInfo(ctrlmetrics.Registry, mgr.GetClient(), opts.Provider.MachineMetricsLabels); err != nil {
		return err
	}
	evacuations, err := metrics.RegisterEvacuations(ctrlmetrics.Registry)
	if err != nil {
		return err
	}
	r.evacuations = evacuations
	b := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Machine{}).
		WithOptions(opts.Queue.Controller())
	b = watchNodes(b, mgr.GetClient())
	if opts.InfraClients != nil {
		gauge, err := metrics.RegisterInfraWatches(ctrlmetrics.Registry)
		if err != nil {
			return err
		}
		r.watches = newInfraWatches(opts.InfraClients, opts.InfraPinned, mgr.GetClient(), opts.InfraNodeLabels.Name != "", gauge, r.log)
		b = b.WatchesRawSource(r.watches.source())
	}
	if opts.InfraNodeLabels.Name != "" {
		labels, err := newInfraNodeLabels(mgr, b, opts.InfraNodeLabels)
		if err != nil {
			return err
		}
		r.infraLabels = labels
	}
	return b.Complete(r)
}

// newReconciler returns the reconciler of opts on mgr, without its
// bootstrap Secret reader, metrics and infra node labels.
func newReconciler(mgr ctrl.Manager, opts Options) *reconciler {
	if opts.Log == nil {
		opts.Log = zap.NewNop().Sugar()
	}
	r := &reconciler{
		client:       mgr.GetClient(),
		provider:     opts.Provider,
		log:          opts.Log.Named(ControllerName),
		recorder:     coreevents.For(mgr, ControllerName),
		pods:         mgr.GetAPIReader(),
		drainTimeout: opts.DrainTimeout,
		joinTimeout:  opts.JoinTimeout,
		stoppedGrace: cmp.Or(opts.StoppedGrace, DefaultStoppedGrace),
		pollNoWatch:  cmp.Or(opts.pollNoWatch, pollNoWatch),
		now:          time.Now,
		name:         opts.Name,
		providerID:   opts.ProviderID,
	}
	if r.drainTimeout == 0 {
		r.drainTimeout = DefaultDrainTimeout
	}
	return r
}

// scope is what one reconcile works on.
type scope struct {
	machine *clusterv1alpha1.Machine
	log     *zap.SugaredLogger
	data    *cloudprovider.ProviderData
	// infra is the infra client the Machine's instance names (see
	// infraClientOf); nil before the instance is known or when its
	// provider names none.
	infra *infra.Client
}

// Reconcile implements reconcile.Reconciler. Finalizer changes are patched
// at once; status changes are patched once, at the end.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (_ reconcile.Result, reterr error) {
	machine := &clusterv1alpha1.Machine{}
	if err := r.client.Get(ctx, req.NamespacedName, machine); err != nil {
		if apierrors.IsNotFound(err) {
			r.writes.forget(req.NamespacedName)
			r.creates.forget(req.NamespacedName)
			r.watches.forget(req.NamespacedName)
		}
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	if wait := r.writes.behind(req.NamespacedName, machine.ResourceVersion, r.now()); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	if !r.handles(machine) {
		r.watches.forget(req.NamespacedName)
		return reconcile.Result{}, nil
	}
	s := &scope{
		machine: machine,
		log:     r.log.With("machine", req.String()),
		data:    &cloudprovider.ProviderData{Client: r.client, Update: r.updater(ctx)},
	}
	before := machine.Status.DeepCopy()
	defer func() {
		if err := r.patchStatus(ctx, machine, before); err != nil {
			reterr = joinErr(reterr, err)
		}
	}()
	var (
		res reconcile.Result
		err error
	)
	if machine.DeletionTimestamp != nil {
		res, err = r.reconcileDelete(ctx, s)
	} else {
		res, err = r.reconcileNormal(ctx, s)
	}
	return r.handleError(s, res, err)
}

// handles reports whether the Machine is this controller's: its controller
// label names this controller and no initializer holds it. A change of
// either is a Machine event, so a skipped Machine is seen again then.
func (r *reconciler) handles(machine *clusterv1alpha1.Machine) bool {
	return machine.Labels[LabelController] == r.name && machine.Annotations[AnnotationInitializers] == ""
}

// patchStatus writes the Machine's status if it differs from before (see
// statusWrites for where it goes).
func (r *reconciler) patchStatus(ctx context.Context, machine *clusterv1alpha1.Machine, before *clusterv1alpha1.MachineStatus) error {
	if apiequality.Semantic.DeepEqual(before, &machine.Status) {
		return nil
	}
	if machine.DeletionTimestamp != nil && len(machine.Finalizers) == 0 {
		// The Machine went with its last finalizer.
		return nil
	}
	base := machine.DeepCopy()
	base.Status = *before
	err := r.statusWrites.patch(ctx, r.log, r.client, machine, base)
	if err == nil {
		r.writes.record(ctrlruntimeclient.ObjectKeyFromObject(machine), machine.ResourceVersion, r.now())
	}
	if ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return fmt.Errorf("failed to patch the status of Machine %s/%s: %w", machine.Namespace, machine.Name, err)
	}
	return nil
}

// updater returns the cloudprovider.MachineUpdater of a reconcile: it
// applies the modifiers and patches the Machine.
func (r *reconciler) updater(ctx context.Context) cloudprovider.MachineUpdater {
	return func(machine *clusterv1alpha1.Machine, modifiers ...func(*clusterv1alpha1.Machine)) error {
		return r.patchMachine(ctx, machine, func(m *clusterv1alpha1.Machine) {
			for _, modify := range modifiers {
				modify(m)
			}
		})
	}
}

// patchMachine applies mutate to the Machine's metadata or spec and
// patches it, with optimistic locking. The Machine's status as this
// reconcile has changed it is kept: the patch response carries the stored
// status, which would otherwise silently replace what the deferred status
// patch is to write.
func (r *reconciler) patchMachine(ctx context.Context, machine *clusterv1alpha1.Machine, mutate func(*clusterv1alpha1.Machine)) error {
	base := machine.DeepCopy()
	mutate(machine)
	status := machine.Status.DeepCopy()
	defer func() { machine.Status = *status }()
	if err := r.client.Patch(ctx, machine, ctrlruntimeclient.MergeFromWithOptions(base, ctrlruntimeclient.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("failed to patch Machine %s/%s: %w", machine.Namespace, machine.Name, err)
	}
	r.writes.record(ctrlruntimeclient.ObjectKeyFromObject(machine), machine.ResourceVersion, r.now())
	return nil
}
