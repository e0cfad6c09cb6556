package machine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// reconcileNormal makes sure the Machine has an instance and a linked Node.
func (r *reconciler) reconcileNormal(ctx context.Context, s *scope) (reconcile.Result, error) {
	inst, pending, err := r.ensureInstance(ctx, s)
	if err != nil {
		return reconcile.Result{}, err
	}
	if inst == nil {
		return reconcile.Result{RequeueAfter: pending}, nil
	}
	s.infra = infraClientOf(inst)
	watched := r.watches.use(ctx, ctrlruntimeclient.ObjectKeyFromObject(s.machine), s.infra)
	clearError(s.machine)
	r.reportWaiting(s, inst)
	grace, deleted, err := r.checkStopped(ctx, s, inst)
	if err != nil || deleted {
		return reconcile.Result{}, err
	}
	s.machine.Status.Addresses = sortedAddresses(inst.Addresses())
	// The Node is looked for even before the instance reports an address:
	// its providerID names the VM, and the infra cache may lag behind the
	// Node (after an infra outage, say).
	res, err := r.linkNode(ctx, s, inst)
	if err != nil {
		return res, err
	}
	if len(s.machine.Status.Addresses) == 0 && s.machine.Status.NodeRef == nil && !watched {
		// A VMI change brings the address when its namespace is watched.
		s.log.Debugw("Polling for the instance's address: its infra namespace has no synced watch", "after", r.pollNoWatch)
		res.RequeueAfter = earliest(res.RequeueAfter, r.pollNoWatch)
	}
	wait, err := r.reconcileEvacuation(ctx, s)
	res.RequeueAfter = earliest(earliest(res.RequeueAfter, grace), wait)
	return res, err
}

// reportWaiting records, once per Machine, reason and message, why its
// instance does not run yet in the infrastructure's own words (for
// KubeVirt, kube-scheduler's reason for not placing the virt-launcher pod).
// It is an event, not an error: the condition may clear by itself, when
// the infra cluster gains room, say.
func (r *reconciler) reportWaiting(s *scope, inst cloudprovider.Instance) {
	w, ok := inst.(cloudprovider.Waiting)
	if !ok || inst.Status() != cloudprovider.StatusCreating {
		return
	}
	reason, message := w.WaitingFor()
	if reason == "" || !r.waits.first(waitKey{machine: s.machine.UID, reason: reason, message: message}) {
		return
	}
	s.log.Infow("The instance does not run yet", "instance", inst.Name(), "reason", reason, "message", message)
	r.recorder.Eventf(s.machine, nil, corev1.EventTypeWarning, ReasonInstanceWaiting, "Schedule",
		"Instance %s does not run yet: %s: %s", inst.Name(), reason, message)
}

// ensureFinalizers adds both finalizers, before any instance is created.
// When creating is true and the provider's providerID is known before
// creation, the same patch sets spec.providerID (see Options.ProviderID).
// A Machine that already has both finalizers gets spec.providerID from its
// Node (setProviderID): its instance may be an older controller's, whose
// Node carries another format.
func (r *reconciler) ensureFinalizers(ctx context.Context, machine *clusterv1alpha1.Machine, creating bool) error {
	if controllerutil.ContainsFinalizer(machine, FinalizerDelete) && controllerutil.ContainsFinalizer(machine, FinalizerNodeDelete) {
		return nil
	}
	providerID := ""
	if creating && r.providerID != nil && machine.Spec.ProviderID == nil {
		providerID = r.providerID(machine)
	}
	return r.updater(ctx)(machine, func(m *clusterv1alpha1.Machine) {
		controllerutil.AddFinalizer(m, FinalizerDelete)
		controllerutil.AddFinalizer(m, FinalizerNodeDelete)
		if providerID != "" {
			m.Spec.ProviderID = &providerID
		}
	})
}

// ensureInstance gets the Machine's instance, creating it when missing.
// The finalizers are added once the spec proved valid (Get did not fail)
// and before anything is created, so a Machine whose spec never worked
// deletes without provider calls. While the provider's cache does not yet
// show an instance this controller created, it returns no instance and how
// long to wait for it (see ownCreates).
func (r *reconciler) ensureInstance(ctx context.Context, s *scope) (cloudprovider.Instance, time.Duration, error) {
	key := ctrlruntimeclient.ObjectKeyFromObject(s.machine)
	inst, err := r.provider.Get(ctx, s.log, s.machine, s.data)
	switch {
	case err == nil:
		r.creates.forget(key)
	case !errors.Is(err, cloudprovider.ErrInstanceNotFound):
		return nil, 0, fmt.Errorf("failed to get the instance: %w", err)
	default:
		if wait := r.creates.pending(key, s.machine.UID, r.now()); wait > 0 {
			return nil, wait, nil
		}
	}
	if ferr := r.ensureFinalizers(ctx, s.machine, err != nil); ferr != nil {
		return nil, 0, ferr
	}
	if err == nil {
		return inst, 0, nil
	}
	ud, err := r.userData(ctx, s.machine)
	if err != nil {
		return nil, 0, err
	}
	inst, err = r.provider.Create(ctx, s.log, s.machine, s.data, ud)
	if err != nil {
		return nil, 0, fmt.Errorf("failed to create the instance: %w", withReason(err, common.CreateMachineError))
	}
	r.creates.record(key, s.machine.UID, r.now())
	r.recorder.Eventf(s.machine, nil, corev1.EventTypeNormal, ReasonCreated, "Create", "Created instance %s", inst.Name())
	return inst, 0, nil
}

// linkNode finds the Node of the instance, sets status.nodeRef and keeps
// the Machine's labels, annotations and taints on the Node, and the
// instance's region and zone labels where the Node has none. A Node that
// is gone clears nodeRef.
func (r *reconciler) linkNode(ctx context.Context, s *scope, inst cloudprovider.Instance) (reconcile.Result, error) {
	var (
		node *corev1.Node
		err  error
	)
	if ref := s.machine.Status.NodeRef; ref != nil {
		if node, err = getNode(ctx, r.client, ref.Name); err != nil {
			return reconcile.Result{}, err
		}
	}
	if node == nil {
		s.machine.Status.NodeRef = nil
		s.machine.Status.Conditions = nil
		if node, err = findNode(ctx, r.client, s.machine.UID, inst.ProviderID(), s.machine.Status.Addresses); err != nil {
			return reconcile.Result{}, err
		}
	}
	if node == nil {
		return r.waitForJoin(ctx, s)
	}
	providerID, topology := inst.ProviderID(), topologyOf(inst)
	infraLabels, infraKnown, err := r.infraNodeLabelsOf(ctx, s)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := patchNode(ctx, r.client, node, func(n *corev1.Node) bool {
		// Labels from the infra node first: the Machine's own win.
		changed := infraKnown && syncInfraLabels(n, infraLabels)
		changed = syncNode(n, s.machine) || changed
		// Region and zone only where absent: spec labels, set just
		// above, and a cloud controller manager's win.
		changed = syncTopology(n, topology) || changed
		// Without a cloud controller manager nobody else sets it; the
		// KubeVirt CCM and CSI driver expect kubevirt://<vm>. A Node that
		// has one keeps it: the field is immutable once set.
		if n.Spec.ProviderID == "" && providerID != "" {
			n.Spec.ProviderID = providerID
			changed = true
		}
		return changed
	}); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.setProviderID(ctx, s.machine, node.Spec.ProviderID); err != nil {
		return reconcile.Result{}, err
	}
	s.machine.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: node.Name, UID: node.UID}
	s.machine.Status.Conditions = nodeConditions(node)
	if v := node.Status.NodeInfo.KubeletVersion; v != "" {
		s.machine.Status.Versions = &clusterv1alpha1.MachineVersionInfo{Kubelet: v}
	}
	return reconcile.Result{}, nil
}

// setProviderID sets the Machine's spec.providerID, once, to its Node's:
// the cluster autoscaler matches Machines to Nodes by it.
func (r *reconciler) setProviderID(ctx context.Context, machine *clusterv1alpha1.Machine, providerID string) error {
	if providerID == "" || machine.Spec.ProviderID != nil {
		return nil
	}
	return r.patchMachine(ctx, machine, func(m *clusterv1alpha1.Machine) { m.Spec.ProviderID = &providerID })
}

// sortedAddresses turns the instance addresses into a sorted list.
func sortedAddresses(in map[string]corev1.NodeAddressType) []corev1.NodeAddress {
	out := make([]corev1.NodeAddress, 0, len(in))
	for addr, typ := range in {
		out = append(out, corev1.NodeAddress{Address: addr, Type: typ})
	}
	slices.SortFunc(out, func(a, b corev1.NodeAddress) int {
		if c := strings.Compare(string(a.Type), string(b.Type)); c != 0 {
			return c
		}
		return strings.Compare(a.Address, b.Address)
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

// waitForJoin handles a Machine whose Node has not joined (or is gone).
// The Node watch enqueues the Machine once its Node registers; with a join
// timeout, a Machine of a MachineSet still without Node after the timeout
// since its creation is deleted, so the MachineSet replaces it.
func (r *reconciler) waitForJoin(ctx context.Context, s *scope) (reconcile.Result, error) {
	ref := metav1.GetControllerOf(s.machine)
	if r.joinTimeout <= 0 || ref == nil || ref.Kind != "MachineSet" {
		return reconcile.Result{}, nil
	}
	if left := s.machine.CreationTimestamp.Add(r.joinTimeout).Sub(r.now()); left > 0 {
		return reconcile.Result{RequeueAfter: left}, nil
	}
	r.recorder.Eventf(s.machine, nil, corev1.EventTypeWarning, ReasonJoinTimeout, "Delete",
		"No Node joined within %s; deleting the Machine so that MachineSet %s replaces it", r.joinTimeout, ref.Name)
	if err := r.client.Delete(ctx, s.machine); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, fmt.Errorf("failed to delete the Machine after its join timeout: %w", err)
	}
	return reconcile.Result{}, nil
}
