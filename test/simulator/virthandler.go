package simulator

import (
	"context"
	"fmt"
	"slices"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Labels KubeVirt's components put on VMIs.
const (
	labelNodeName            = "kubevirt.io/nodeName"
	labelMigrationTargetNode = "kubevirt.io/migrationTargetNodeName"
	annotationEvictionSource = "kubevirt.io/eviction-source"
)

// migrationPort is the port a simulated target node listens on for a
// migration's memory transfer, as virt-handler's migration proxy reports it.
const migrationPort = 49152

// virtHandler plays KubeVirt's virt-handler of one infra node, acting as
// that node's virt-handler (its ServiceAccount with a token bound to a pod on
// the node, so KubeVirt's node restriction lets it change only the VMIs of
// the node, and with an update of the whole VMI, which is all its RBAC
// allows): it boots the guests of VMIs scheduled on the node (Running after
// StartDelay, with interfaces and addresses, or Failed when the guest
// crashes), shuts down deleted ones (Succeeded), and carries out its half of
// a live migration, as source or target.
type virtHandler struct {
	node       string
	client     ctrlruntimeclient.Client // as the node's virt-handler
	vmis       ctrlruntimeclient.Reader // its VMI cache
	admin      ctrlruntimeclient.Reader // what the guests' hardware knows: VMs, PVCs
	startDelay time.Duration
}

func (h *virtHandler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := h.vmis.Get(ctx, req.NamespacedName, vmi); err != nil {
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	base := vmi.DeepCopy()
	var wait time.Duration
	var err error
	switch ms := vmi.Status.MigrationState; {
	case migrationTarget(vmi, h.node):
		h.migrateIn(vmi)
	case vmi.Status.NodeName != h.node || vmi.IsFinal():
		return reconcile.Result{}, nil
	case failsMigration(vmi, h.node):
		failMigration(vmi)
	case migrationSource(vmi, h.node) && ms.TargetNodeAddress != "" && ms.StartTimestamp == nil:
		ms.StartTimestamp, ms.Mode = ptrNow(), kubevirtcorev1.MigrationPreCopy
	case vmi.DeletionTimestamp != nil:
		// The guest is shut down gracefully.
		setPhase(vmi, kubevirtcorev1.Succeeded)
	case vmi.Annotations[AnnotationCrash] == "true":
		setPhase(vmi, kubevirtcorev1.Failed)
	case vmi.Status.Phase == kubevirtcorev1.Scheduled:
		wait, err = h.start(ctx, vmi)
	}
	if err != nil || equality.Semantic.DeepEqual(base, vmi) {
		return reconcile.Result{RequeueAfter: wait}, err
	}
	if err := h.client.Update(ctx, vmi); err != nil {
		return reconcile.Result{}, fmt.Errorf("virt-handler of %s failed to update VMI %s: %w", h.node, req, ctrlruntimeclient.IgnoreNotFound(err))
	}
	return reconcile.Result{RequeueAfter: wait}, nil
}

// start boots the guest of a scheduled VMI once StartDelay has passed since
// it was scheduled: Running, with the addresses of its interfaces and
// whether it can live-migrate; Failed instead when its VM is marked to
// crash on every start.
func (h *virtHandler) start(ctx context.Context, vmi *kubevirtcorev1.VirtualMachineInstance) (time.Duration, error) {
	if left := time.Until(phaseTime(vmi, kubevirtcorev1.Scheduled).Add(h.startDelay)); left > 0 {
		return left, nil
	}
	vm := &kubevirtcorev1.VirtualMachine{}
	if err := h.admin.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vmi), vm); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return 0, err
	}
	if vm.Annotations[AnnotationCrashLoop] == "true" {
		setPhase(vmi, kubevirtcorev1.Failed)
		return 0, nil
	}
	migratable, why, err := h.liveMigratable(ctx, vmi)
	if err != nil {
		return 0, err
	}
	setPhase(vmi, kubevirtcorev1.Running)
	vmi.Status.SelinuxContext = "none"
	vmi.Status.MigrationMethod = kubevirtcorev1.LiveMigration
	setVMICondition(vmi, kubevirtcorev1.VirtualMachineInstanceCondition{
		Type: kubevirtcorev1.VirtualMachineInstanceIsMigratable, Status: conditionStatus(migratable), Reason: why,
	})
	for i := range vmi.Status.Interfaces {
		iface := &vmi.Status.Interfaces[i]
		iface.MAC = macFor(vmi.Namespace, vmi.Name, iface.Name)
		iface.LinkState, iface.QueueCount = "up", 1
		if i == 0 {
			ip := IPFor(vmi.Namespace, vmi.Name)
			iface.IP, iface.IPs, iface.InterfaceName = ip, []string{ip}, "eth0"
			iface.InfoSource = "domain, guest-agent"
		}
	}
	return 0, nil
}

// liveMigratable tells, as virt-handler's LiveMigratable condition does,
// whether the VMI can move: not with host devices, nor with a volume whose
// claim is not shared (ReadWriteMany).
func (h *virtHandler) liveMigratable(ctx context.Context, vmi *kubevirtcorev1.VirtualMachineInstance) (bool, string, error) {
	devices := vmi.Spec.Domain.Devices
	if len(devices.HostDevices) > 0 || len(devices.GPUs) > 0 {
		return false, kubevirtcorev1.VirtualMachineInstanceReasonHostDeviceNotMigratable, nil
	}
	for _, vol := range vmi.Spec.Volumes {
		var claim string
		switch {
		case vol.PersistentVolumeClaim != nil:
			claim = vol.PersistentVolumeClaim.ClaimName
		case vol.DataVolume != nil:
			claim = vol.DataVolume.Name
		default:
			continue
		}
		pvc := &corev1.PersistentVolumeClaim{}
		if err := h.admin.Get(ctx, types.NamespacedName{Namespace: vmi.Namespace, Name: claim}, pvc); err != nil {
			return false, "", ctrlruntimeclient.IgnoreNotFound(err)
		}
		if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
			return false, kubevirtcorev1.VirtualMachineInstanceReasonDisksNotMigratable, nil
		}
	}
	return true, "", nil
}

// migrationTarget reports whether the node receives the VMI in a migration
// that has not ended.
func migrationTarget(vmi *kubevirtcorev1.VirtualMachineInstance, node string) bool {
	ms := vmi.Status.MigrationState
	return ms != nil && ms.TargetNode == node && vmi.Labels[labelMigrationTargetNode] == node && !ms.Failed
}

// migrationSource reports whether the node sends the VMI away.
func migrationSource(vmi *kubevirtcorev1.VirtualMachineInstance, node string) bool {
	ms := vmi.Status.MigrationState
	return ms != nil && ms.SourceNode == node && !ms.Completed && !ms.Failed
}

// migrateIn carries out the target's steps, one per call, as the target
// virt-handler does: announce the address the source sends to; once the
// source has started, detect the incoming domain; then take the VMI over
// (its node, the evacuation done); then mark the migration completed.
func (h *virtHandler) migrateIn(vmi *kubevirtcorev1.VirtualMachineInstance) {
	ms := vmi.Status.MigrationState
	switch {
	case ms.TargetNodeAddress == "":
		ms.TargetNodeAddress = hostIP(h.node)
		ms.TargetDirectMigrationNodePorts = map[string]int{fmt.Sprint(migrationPort + 1): migrationPort}
	case ms.StartTimestamp == nil:
		// The source virt-handler starts the transfer.
	case !ms.TargetNodeDomainDetected:
		ms.TargetNodeDomainDetected, ms.TargetNodeDomainReadyTimestamp = true, ptrNow()
	case ms.EndTimestamp == nil:
		ms.EndTimestamp = ptrNow()
		vmi.Status.NodeName = h.node
		vmi.Labels[labelNodeName] = h.node
		vmi.Status.EvacuationNodeName = ""
		vmi.Status.MigrationTransport = kubevirtcorev1.MigrationTransportUnix
		vmi.Status.LauncherContainerImageVersion = ""
		delete(vmi.Annotations, annotationEvictionSource)
	case !ms.Completed:
		ms.Completed = true
		delete(vmi.Labels, labelMigrationTargetNode)
	}
}

// setPhase moves the VMI to phase and records when, as virt-handler does.
func setPhase(vmi *kubevirtcorev1.VirtualMachineInstance, phase kubevirtcorev1.VirtualMachineInstancePhase) {
	if vmi.Status.Phase == phase {
		return
	}
	vmi.Status.Phase = phase
	vmi.Status.PhaseTransitionTimestamps = append(vmi.Status.PhaseTransitionTimestamps, kubevirtcorev1.VirtualMachineInstancePhaseTransitionTimestamp{
		Phase: phase, PhaseTransitionTimestamp: metav1.Now(),
	})
}

// phaseTime returns when the VMI entered phase (its creation when unknown).
func phaseTime(vmi *kubevirtcorev1.VirtualMachineInstance, phase kubevirtcorev1.VirtualMachineInstancePhase) time.Time {
	for _, t := range slices.Backward(vmi.Status.PhaseTransitionTimestamps) {
		if t.Phase == phase {
			return t.PhaseTransitionTimestamp.Time
		}
	}
	return vmi.CreationTimestamp.Time
}

func setVMICondition(vmi *kubevirtcorev1.VirtualMachineInstance, c kubevirtcorev1.VirtualMachineInstanceCondition) {
	for i := range vmi.Status.Conditions {
		if old := &vmi.Status.Conditions[i]; old.Type == c.Type {
			if old.Status != c.Status || old.Reason != c.Reason {
				c.LastTransitionTime = metav1.Now()
				*old = c
			}
			return
		}
	}
	c.LastTransitionTime = metav1.Now()
	vmi.Status.Conditions = append(vmi.Status.Conditions, c)
}

func ptrNow() *metav1.Time {
	now := metav1.Now()
	return &now
}
