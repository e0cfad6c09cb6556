package machine

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// AnnotationEvacuationCordon marks a Node this controller cordoned for the
// evacuation of its VM from an infra node; its value is when (RFC 3339).
// Only Nodes with it are uncordoned once the VM runs again, so a Node a
// person cordoned stays cordoned.
const AnnotationEvacuationCordon = "machine-controller.kubevirt.io/evacuation-cordon"

// LabelEvacuatedVMI labels the VirtualMachineInstanceMigrations the
// controller creates with the name of their VMI.
const LabelEvacuatedVMI = "machine-controller.kubevirt.io/evacuated-vmi"

// infraVMI returns the Machine's VMI from the infra cache of its own infra
// client, nil when there is none or the instance names no infra client.
func infraVMI(ctx context.Context, s *scope) (*kubevirtcorev1.VirtualMachineInstance, error) {
	if s.infra == nil {
		return nil, nil
	}
	key := ctrlruntimeclient.ObjectKey{Namespace: s.infra.Namespace, Name: s.machine.Name}
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := s.infra.Reader.Get(ctx, key, vmi); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("failed to get VirtualMachineInstance %s: %w", key, err)
	}
	return vmi, nil
}

// evacuating reports whether KubeVirt asks the VMI to leave its infra node.
func evacuating(vmi *kubevirtcorev1.VirtualMachineInstance) bool {
	return vmi.DeletionTimestamp == nil && vmi.Status.EvacuationNodeName != "" &&
		vmi.Status.EvacuationNodeName == vmi.Status.NodeName
}

// reconcileEvacuation answers KubeVirt's evacuation of the Machine's VMI
// (read and written through the Machine's own infra client, whichever
// kubeconfig and namespace its spec names) from an infra node (status.evacuationNodeName, set when the infra node is
// drained) by the way planEvacuation chooses: restart cordons and drains
// the guest Node, then deletes the VMI, so that run strategy Always starts
// it on another infra node; liveMigrate creates a
// VirtualMachineInstanceMigration; replace cordons and drains the guest
// Node, then deletes the Machine, so that its MachineSet replaces it. Once
// the VMI runs again, a Node the controller cordoned is uncordoned. It
// returns when to look again while a drain is under way.
func (r *reconciler) reconcileEvacuation(ctx context.Context, s *scope) (time.Duration, error) {
	ref := s.machine.Status.NodeRef
	if ref == nil {
		return 0, nil
	}
	vmi, err := infraVMI(ctx, s)
	if err != nil || vmi == nil {
		return 0, err
	}
	node, err := getNode(ctx, r.client, ref.Name)
	if err != nil || node == nil {
		return 0, err
	}
	if !evacuating(vmi) {
		if vmi.Status.Phase == kubevirtcorev1.Running {
			return 0, patchNode(ctx, r.client, node, uncordonEvacuated)
		}
		return 0, nil
	}
	plan := planEvacuation(vmi, s.machine)
	switch plan.action {
	case "":
		return 0, nil
	case config.EvacuationLiveMigrate:
		return 0, r.requestMigration(ctx, s, vmi, plan)
	}
	if wait, err := r.drainForEvacuation(ctx, s, node); wait > 0 || err != nil {
		return wait, err
	}
	r.recordFallback(s, plan)
	if plan.action == config.EvacuationReplace {
		return 0, r.replaceEvacuated(ctx, s, vmi, node, plan)
	}
	return 0, r.restartEvacuated(ctx, s, vmi, node, plan)
}

// drainForEvacuation cordons and drains the guest Node; it returns how long
// to wait while pods are still leaving. The drain is bounded by the drain
// timeout, counted from the cordon.
func (r *reconciler) drainForEvacuation(ctx context.Context, s *scope, node *corev1.Node) (time.Duration, error) {
	now := r.now()
	if err := patchNode(ctx, r.client, node, func(n *corev1.Node) bool { return cordonForEvacuation(n, now) }); err != nil {
		return 0, err
	}
	since := now
	if at, err := time.Parse(time.RFC3339, node.Annotations[AnnotationEvacuationCordon]); err == nil {
		since = at
	}
	if r.drainTimeout < 0 || !shouldDrain(node, since, now, r.drainTimeout) {
		return 0, nil
	}
	state, err := drain(ctx, r.client, r.pods, node, now)
	if err != nil {
		return 0, err
	}
	if state.pending > 0 {
		s.log.Debugw("Draining Node for an infra node evacuation", "node", node.Name, "pending", state.pending, "blocked", state.blocked)
		return pollDrain, nil
	}
	return 0, nil
}

// restartEvacuated deletes the VMI of a drained guest Node.
func (r *reconciler) restartEvacuated(ctx context.Context, s *scope, vmi *kubevirtcorev1.VirtualMachineInstance, node *corev1.Node, plan evacuationPlan) error {
	if err := s.infra.Writer.Delete(ctx, vmi, ctrlruntimeclient.Preconditions{UID: &vmi.UID}); ctrlruntimeclient.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete the evacuated VirtualMachineInstance %s: %w", vmi.Name, err)
	}
	r.recordEvacuation(s, plan, outcomeRestarted, ReasonEvacuated, "Evacuate",
		"Drained Node %s and deleted VirtualMachineInstance %s to restart it away from infra node %s", node.Name, vmi.Name, vmi.Status.NodeName)
	return nil
}

// replaceEvacuated deletes the Machine of a drained guest Node, so that its
// MachineSet creates another one; the deletion removes the VM.
func (r *reconciler) replaceEvacuated(ctx context.Context, s *scope, vmi *kubevirtcorev1.VirtualMachineInstance, node *corev1.Node, plan evacuationPlan) error {
	if err := r.client.Delete(ctx, s.machine); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return fmt.Errorf("failed to delete the Machine of an evacuated VirtualMachineInstance: %w", err)
	}
	r.recordEvacuation(s, plan, outcomeReplaced, ReasonEvacuationReplaced, "Delete",
		"Drained Node %s and deleted the Machine so that MachineSet %s replaces it: VirtualMachineInstance %s leaves infra node %s",
		node.Name, machineSetOf(s.machine), vmi.Name, vmi.Status.NodeName)
	return nil
}

// kubeVirtMigrationInFlight starts the message by which KubeVirt's
// migration admission refuses a migration while another migration of the
// VMI has not ended; the VMI's status shows such a migration only once its
// target pod runs.
const kubeVirtMigrationInFlight = "in-flight migration detected"

// requestMigration creates the live migration of an evacuated VMI, one per
// infra node it leaves; none while one is under way, since KubeVirt (with
// evictionStrategy LiveMigrate) may have started its own, and a refusal
// for that reason is no error. Either way the migration is reported once.
func (r *reconciler) requestMigration(ctx context.Context, s *scope, vmi *kubevirtcorev1.VirtualMachineInstance, plan evacuationPlan) error {
	if migrationInFlight(vmi) {
		r.reportMigration(s, vmi, plan, "")
		return nil
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(vmi.Status.NodeName))
	migration := &kubevirtcorev1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s-evacuation-%08x", vmi.Name, h.Sum32()),
			Namespace: vmi.Namespace,
			Labels:    map[string]string{LabelEvacuatedVMI: vmi.Name},
		},
		Spec: kubevirtcorev1.VirtualMachineInstanceMigrationSpec{VMIName: vmi.Name},
	}
	err := s.infra.Writer.Create(ctx, migration)
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil
	case err != nil && strings.Contains(err.Error(), kubeVirtMigrationInFlight):
		r.reportMigration(s, vmi, plan, "")
		return nil
	case err != nil:
		return fmt.Errorf("failed to create the migration of VirtualMachineInstance %s: %w", vmi.Name, err)
	}
	r.reportMigration(s, vmi, plan, migration.Name)
	return nil
}

// reportMigration records the Migrating event and count of the VMI's
// migration away from its infra node, once per migration: requested names
// the migration the controller created, "" one KubeVirt started.
func (r *reconciler) reportMigration(s *scope, vmi *kubevirtcorev1.VirtualMachineInstance, plan evacuationPlan, requested string) {
	if !r.migrations.first(migrationKey{vmi: vmi.UID, node: vmi.Status.NodeName}) {
		return
	}
	if requested != "" {
		r.recordEvacuation(s, plan, outcomeMigrating, ReasonMigrating, "Evacuate",
			"Requested the live migration %s of VirtualMachineInstance %s away from infra node %s", requested, vmi.Name, vmi.Status.NodeName)
		return
	}
	r.recordEvacuation(s, plan, outcomeMigrating, ReasonMigrating, "Evacuate",
		"The live migration of VirtualMachineInstance %s away from infra node %s is under way", vmi.Name, vmi.Status.NodeName)
}

// recordFallback records a Warning event when the plan does not follow
// its policy.
func (r *reconciler) recordFallback(s *scope, plan evacuationPlan) {
	if plan.fallback == "" {
		return
	}
	r.recorder.Eventf(s.machine, nil, corev1.EventTypeWarning, ReasonEvacuationFallback, "Evacuate",
		"Evacuation policy %s falls back to %s: %s", plan.policy, plan.action, plan.fallback)
}

// recordEvacuation counts an evacuation by policy and outcome (without the
// counter, in tests, it is not counted) and records its Normal event, whose
// message ends with the policy.
func (r *reconciler) recordEvacuation(s *scope, plan evacuationPlan, outcome, reason, action, note string, args ...any) {
	if r.evacuations != nil {
		r.evacuations.WithLabelValues(string(plan.policy), outcome).Inc()
	}
	r.recorder.Eventf(s.machine, nil, corev1.EventTypeNormal, reason, action, note+" (evacuation policy %s)", append(args, plan.policy)...)
}

// cordonForEvacuation cordons a schedulable Node and marks it as cordoned
// by the controller; a Node already cordoned is left as it is.
func cordonForEvacuation(node *corev1.Node, now time.Time) bool {
	if node.Spec.Unschedulable {
		return false
	}
	node.Spec.Unschedulable = true
	metav1.SetMetaDataAnnotation(&node.ObjectMeta, AnnotationEvacuationCordon, now.UTC().Format(time.RFC3339))
	return true
}

// uncordonEvacuated uncordons a Node the controller cordoned for an
// evacuation and removes the mark.
func uncordonEvacuated(node *corev1.Node) bool {
	if _, ok := node.Annotations[AnnotationEvacuationCordon]; !ok {
		return false
	}
	delete(node.Annotations, AnnotationEvacuationCordon)
	node.Spec.Unschedulable = false
	return true
}
