package machinedeployment

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/coreevents"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/coalesce"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/ownership"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// ControllerName names the controller and its events.
const ControllerName = "machinedeployment-controller"

// waitForSets is how long a reconcile waits before looking again when its
// cache does not show its own MachineSet changes yet; their events usually
// come first.
const waitForSets = time.Second

// Options configure the MachineDeployment controller.
type Options struct {
	// Queue holds the number of workers and the retry backoff.
	Queue queue.Options
	// StatusWindow is how long, after a reconcile wrote a
	// MachineDeployment, the changes of its MachineSets wait before they
	// reconcile it again, so that a burst of them costs one status write
	// per window (see package coalesce): coalesce.DefaultWindow when 0, no
	// wait when negative. Changes of the MachineDeployment itself
	// reconcile at once.
	StatusWindow time.Duration
	// TemplateRevision, when set, gives the revision of what a template
	// depends on in the infra cluster (see AnnotationInfraRevision).
	TemplateRevision TemplateRevisionFunc
	// Capacity, when set, tells the capacity of a template's Nodes, kept
	// in the cluster autoscaler's annotations (see AnnotationCapacityCPU).
	Capacity cloudprovider.CapacityProvider
	// Infra and RevisionObjects, when set, are the infra cluster and the
	// kinds TemplateRevision and Capacity read: a creation, deletion or
	// generation change of one of them reconciles every MachineDeployment.
	Infra           cluster.Cluster
	RevisionObjects []ctrlruntimeclient.Object
}

// reconciler reconciles MachineDeployments.
type reconciler struct {
	client           ctrlruntimeclient.Client
	recorder         events.EventRecorder
	pending          *pending
	now              func() time.Time
	templateRevision TemplateRevisionFunc
	capacity         cloudprovider.CapacityProvider
	window           *coalesce.Window
}

// Add registers the MachineDeployment controller with mgr.
func Add(mgr ctrl.Manager, opts Options) error {
	r := newReconciler(mgr.GetClient(), coreevents.For(mgr, ControllerName))
	r.templateRevision, r.capacity, r.window = opts.TemplateRevision, opts.Capacity, coalesce.New(opts.StatusWindow)
	owner := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &clusterv1alpha1.MachineDeployment{}, handler.OnlyControllerOwner())
	b := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.MachineDeployment{}, builder.WithPredicates(coalesce.OwnerChanged)).
		Watches(&clusterv1alpha1.MachineSet{}, r.window.Handler(owner)).
		Watches(&clusterv1alpha1.MachineSet{}, handler.EnqueueRequestsFromMapFunc(r.deploymentsForOrphan)).
		WithOptions(opts.Queue.Controller())
	if opts.Infra != nil {
		for _, obj := range opts.RevisionObjects {
			b = b.WatchesRawSource(source.Kind(opts.Infra.GetCache(), obj,
				handler.EnqueueRequestsFromMapFunc(r.allDeployments), predicate.GenerationChangedPredicate{}))
		}
	}
	return b.Complete(r)
}

func newReconciler(c ctrlruntimeclient.Client, recorder events.EventRecorder) *reconciler {
	return &reconciler{client: c, recorder: recorder, pending: newPending(), now: time.Now, window: coalesce.New(0)}
}

// Reconcile implements reconcile.Reconciler.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	md := &clusterv1alpha1.MachineDeployment{}
	if err := r.client.Get(ctx, req.NamespacedName, md); err != nil {
		r.pending.forget(req.NamespacedName)
		r.window.Forget(req.NamespacedName)
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	defer r.window.Track(md, int(ptr.Deref(md.Spec.Replicas, 0)))()
	if md.DeletionTimestamp != nil {
		// The garbage collector deletes the MachineSets it owns.
		return reconcile.Result{}, nil
	}
	// The defaults of the SDK (and of Kubermatic's webhook), in memory
	// only: patches are computed from this defaulted copy.
	clusterv1alpha1.PopulateDefaultsMachineDeployment(md)
	selector, l, err := validate(md)
	if err != nil {
		return reconcile.Result{}, r.refuse(ctx, md, err)
	}
	sets, err := r.setsOf(ctx, md, selector)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !r.pending.synced(req.NamespacedName, sets) {
		return reconcile.Result{RequeueAfter: waitForSets}, nil
	}
	invalidSpec, err := r.withInfraRevision(ctx, md, sets)
	if err != nil {
		return reconcile.Result{}, err
	}
	newSet, olds, err := split(md, sets)
	if err != nil {
		return reconcile.Result{}, r.refuse(ctx, md, err)
	}
	var created bool
	if md.Spec.Paused {
		err = r.scalePaused(ctx, md, newSet, olds, l)
	} else {
		var scaled bool
		scaled, err = r.scaleMidRollout(ctx, md, newSet, olds, l)
		if err == nil && !scaled {
			newSet, created, err = r.rollout(ctx, md, newSet, olds, l)
		}
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if md.Spec.Paused || complete(md, newSet, olds) {
		if err := r.prune(ctx, md, olds); err != nil {
			return reconcile.Result{}, err
		}
	}
	return r.updateStatus(ctx, md, newSet, olds, created, invalidSpec)
}

// selectorOf returns the MachineDeployment's selector. An empty selector,
// or one its template does not match, is an error.
func selectorOf(md *clusterv1alpha1.MachineDeployment) (labels.Selector, error) {
	return ownership.Selector(&md.Spec.Selector, md.Spec.Template.Labels)
}

// setsOf lists the MachineSets of the MachineDeployment's namespace that
// match its selector, adopts those without a controller and returns those
// it controls.
func (r *reconciler) setsOf(ctx context.Context, md *clusterv1alpha1.MachineDeployment, selector labels.Selector) ([]*clusterv1alpha1.MachineSet, error) {
	list := &clusterv1alpha1.MachineSetList{}
	if err := r.client.List(ctx, list, ctrlruntimeclient.InNamespace(md.Namespace), ctrlruntimeclient.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("failed to list MachineSets: %w", err)
	}
	var owned []*clusterv1alpha1.MachineSet
	for i := range list.Items {
		ms := &list.Items[i]
		ref := metav1.GetControllerOf(ms)
		if ref == nil && ms.DeletionTimestamp == nil {
			base := ms.DeepCopy()
			ms.OwnerReferences = append(ms.OwnerReferences, controllerRef(md))
			if err := r.client.Patch(ctx, ms, ctrlruntimeclient.MergeFromWithOptions(base, ctrlruntimeclient.MergeFromWithOptimisticLock{})); err != nil {
				return nil, fmt.Errorf("failed to adopt MachineSet %s: %w", ms.Name, err)
			}
			ref = metav1.GetControllerOf(ms)
		}
		if ref != nil && ref.UID == md.UID {
			owned = append(owned, ms)
		}
	}
	return owned, nil
}

// split returns the MachineSet whose template is the MachineDeployment's
// (nil when none is) and the others, oldest revision first.
func split(md *clusterv1alpha1.MachineDeployment, sets []*clusterv1alpha1.MachineSet) (*clusterv1alpha1.MachineSet, []*clusterv1alpha1.MachineSet, error) {
	sets = slices.Clone(sets)
	slices.SortStableFunc(sets, func(a, b *clusterv1alpha1.MachineSet) int {
		return cmp.Or(
			cmp.Compare(revisionOf(a.Annotations), revisionOf(b.Annotations)),
			a.CreationTimestamp.Compare(b.CreationTimestamp.Time),
			cmp.Compare(a.Name, b.Name),
		)
	})
	var newSet *clusterv1alpha1.MachineSet
	olds := make([]*clusterv1alpha1.MachineSet, 0, len(sets))
	for _, ms := range sets {
		same, err := sameTemplate(&md.Spec.Template, &ms.Spec.Template)
		if err != nil {
			return nil, nil, err
		}
		if same && newSet == nil && ms.DeletionTimestamp == nil {
			newSet = ms
			continue
		}
		olds = append(olds, ms)
	}
	return newSet, olds, nil
}

// complete tells whether the rollout is done: the new MachineSet has every
// desired replica available and the old ones have none left.
func complete(md *clusterv1alpha1.MachineDeployment, newSet *clusterv1alpha1.MachineSet, olds []*clusterv1alpha1.MachineSet) bool {
	desired := replicasOf(md)
	if newSet == nil || ptr.Deref(newSet.Spec.Replicas, 1) != desired ||
		newSet.Status.Replicas != desired || newSet.Status.AvailableReplicas < desired {
		return false
	}
	for _, ms := range olds {
		if ptr.Deref(ms.Spec.Replicas, 1) != 0 || ms.Status.Replicas != 0 {
			return false
		}
	}
	return true
}

// controllerRef is the owner reference of a MachineDeployment's
// MachineSets.
func controllerRef(md *clusterv1alpha1.MachineDeployment) metav1.OwnerReference {
	return ownership.ControllerRef("MachineDeployment", md)
}

// deploymentsForOrphan enqueues the MachineDeployments of a MachineSet's
// namespace whose selector matches it, for a MachineSet without
// controller.
func (r *reconciler) deploymentsForOrphan(ctx context.Context, obj ctrlruntimeclient.Object) []reconcile.Request {
	return ownership.OrphanRequests(ctx, r.client, obj, &clusterv1alpha1.MachineDeploymentList{}, selectorOf)
}
