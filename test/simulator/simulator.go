package simulator

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// NodeName is the infra node every simulated VMI runs on.
const NodeName = "infra-node-sim"

// Options tune the simulated delays and imports.
type Options struct {
	// ImportDelay is how long a DataVolume stays in progress.
	ImportDelay time.Duration
	// StartDelay is how long a VMI stays Scheduled before Running.
	StartDelay time.Duration
	// UserClient, when set, plays the kubelets of the guests: it registers
	// a Ready Node in the user cluster for every running VMI (named like
	// the VM, providerID kubevirt://<vm>, InternalIP the VMI's address) and
	// removes it once the VM is gone or being deleted.
	UserClient ctrlruntimeclient.Client
	// ImportHTTP makes the import of a DataVolume with an HTTP source really
	// download the URL (with test/importer) before it can succeed, so an
	// image server in the test sees every import; a failed download is
	// retried. Off by default: imports then only take ImportDelay.
	ImportHTTP bool
	// HTTPClient downloads the images when ImportHTTP is set;
	// http.DefaultClient when nil.
	HTTPClient *http.Client
}

// Add registers the simulator with a manager of the infra cluster.
func Add(mgr ctrl.Manager, opts Options) error {
	r := &reconciler{client: mgr.GetClient(), opts: opts}
	return ctrl.NewControllerManagedBy(mgr).
		Named("kubevirt-simulator").
		For(&kubevirtcorev1.VirtualMachine{}).
		Owns(&kubevirtcorev1.VirtualMachineInstance{}).
		Owns(&cdicorev1beta1.DataVolume{}).
		WatchesRawSource(source.Kind(mgr.GetCache(), &kubevirtcorev1.VirtualMachineInstanceMigration{},
			handler.TypedEnqueueRequestsFromMapFunc(migrationToVM))).
		// Tests run several simulators in one process.
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true)}).
		Complete(r)
}

type reconciler struct {
	client  ctrlruntimeclient.Client
	opts    Options
	imports httpImports
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	vm := &kubevirtcorev1.VirtualMachine{}
	if err := r.client.Get(ctx, req.NamespacedName, vm); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, r.removeNode(ctx, req.Name)
		}
		return reconcile.Result{}, err
	}
	if vm.DeletionTimestamp != nil {
		// The owner-reference garbage collector removes VMI and DataVolumes.
		return reconcile.Result{}, r.removeNode(ctx, vm.Name)
	}
	wait, err := r.reconcileDataVolumes(ctx, vm)
	if err != nil || wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, err
	}
	wait, err = r.reconcileVMI(ctx, vm)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.completeMigrations(ctx, vm); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.registerNode(ctx, vm); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: wait}, r.updateVMStatus(ctx, vm)
}

// reconcileDataVolumes creates missing DataVolumes and completes imports
// whose delay has passed. It returns how long to wait for the rest.
func (r *reconciler) reconcileDataVolumes(ctx context.Context, vm *kubevirtcorev1.VirtualMachine) (time.Duration, error) {
	var wait time.Duration
	for _, tmpl := range vm.Spec.DataVolumeTemplates {
		dv := &cdicorev1beta1.DataVolume{}
		err := r.client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: vm.Namespace, Name: tmpl.Name}, dv)
		if apierrors.IsNotFound(err) {
			dv = &cdicorev1beta1.DataVolume{
				ObjectMeta: metav1.ObjectMeta{
					Name: tmpl.Name, Namespace: vm.Namespace,
					Labels: tmpl.Labels, Annotations: tmpl.Annotations,
					OwnerReferences: []metav1.OwnerReference{ownerRef(vm)},
				},
				Spec: tmpl.Spec,
			}
			if err := r.client.Create(ctx, dv); err != nil {
				return 0, fmt.Errorf("failed to create DataVolume %s: %w", tmpl.Name, err)
			}
		} else if err != nil {
			return 0, fmt.Errorf("failed to get DataVolume %s: %w", tmpl.Name, err)
		}
		w, err := r.progressDataVolume(ctx, dv)
		if err != nil {
			return 0, err
		}
		wait = max(wait, w)
	}
	return wait, nil
}

func (r *reconciler) progressDataVolume(ctx context.Context, dv *cdicorev1beta1.DataVolume) (time.Duration, error) {
	if dv.Status.Phase == cdicorev1beta1.Succeeded {
		return 0, nil
	}
	if err := r.importHTTP(ctx, dv); err != nil {
		return 0, err
	}
	remaining := time.Until(dv.CreationTimestamp.Add(r.opts.ImportDelay))
	phase, progress := cdicorev1beta1.ImportInProgress, cdicorev1beta1.DataVolumeProgress("50.0%")
	if dv.Spec.Source != nil && dv.Spec.Source.Blank != nil || remaining <= 0 {
		phase, progress, remaining = cdicorev1beta1.Succeeded, "100.0%", 0
	}
	if dv.Status.Phase != phase {
		dv.Status.Phase, dv.Status.Progress = phase, progress
		if err := r.client.Status().Update(ctx, dv); err != nil {
			return 0, fmt.Errorf("failed to update DataVolume %s status: %w", dv.Name, err)
		}
	}
	return max(remaining, 0), nil
}

// reconcileVMI creates the VMI of a VM that should run and moves it to
// Running once StartDelay has passed.
func (r *reconciler) reconcileVMI(ctx context.Context, vm *kubevirtcorev1.VirtualMachine) (time.Duration, error) {
	if rs := vm.Spec.RunStrategy; rs != nil && *rs == kubevirtcorev1.RunStrategyHalted {
		return 0, nil
	}
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	err := r.client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), vmi)
	if apierrors.IsNotFound(err) {
		vmi = &kubevirtcorev1.VirtualMachineInstance{
			ObjectMeta: metav1.ObjectMeta{
				Name: vm.Name, Namespace: vm.Namespace,
				Labels: vm.Spec.Template.ObjectMeta.Labels, Annotations: vm.Spec.Template.ObjectMeta.Annotations,
				OwnerReferences: []metav1.OwnerReference{ownerRef(vm)},
			},
			Spec: vm.Spec.Template.Spec,
		}
		if err := r.client.Create(ctx, vmi); err != nil {
			return 0, fmt.Errorf("failed to create VirtualMachineInstance %s: %w", vm.Name, err)
		}
	} else if err != nil {
		return 0, fmt.Errorf("failed to get VirtualMachineInstance %s: %w", vm.Name, err)
	}
	if ended, err := r.restartEnded(ctx, vm, vmi); err != nil || ended {
		return 0, err
	}
	if vmi.DeletionTimestamp != nil || vmi.Status.Phase == kubevirtcorev1.Running {
		return 0, nil
	}
	remaining := time.Until(vmi.CreationTimestamp.Add(r.opts.StartDelay))
	phase := kubevirtcorev1.Scheduled
	if remaining <= 0 {
		phase = kubevirtcorev1.Running
	}
	if vmi.Status.Phase != phase {
		vmi.Status.Phase = phase
		vmi.Status.NodeName = placement(vm)
		if phase == kubevirtcorev1.Running {
			ip := IPFor(vm.Namespace, vm.Name)
			vmi.Status.Interfaces = []kubevirtcorev1.VirtualMachineInstanceNetworkInterface{{
				Name: "default", IP: ip, IPs: []string{ip}, InterfaceName: "eth0",
			}}
		}
		if err := r.client.Update(ctx, vmi); err != nil {
			return 0, fmt.Errorf("failed to update VirtualMachineInstance %s status: %w", vm.Name, err)
		}
	}
	return max(remaining, 0), nil
}

func (r *reconciler) updateVMStatus(ctx context.Context, vm *kubevirtcorev1.VirtualMachine) error {
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	running := r.client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), vmi) == nil && vmi.Status.Phase == kubevirtcorev1.Running
	status := kubevirtcorev1.VirtualMachineStatusProvisioning
	if running {
		status = kubevirtcorev1.VirtualMachineStatusRunning
	}
	if vm.Status.PrintableStatus == status && vm.Status.Ready == running {
		return nil
	}
	vm.Status.PrintableStatus, vm.Status.Ready, vm.Status.Created = status, running, true
	if err := r.client.Status().Update(ctx, vm); err != nil {
		return fmt.Errorf("failed to update VirtualMachine %s status: %w", vm.Name, err)
	}
	return nil
}

func ownerRef(vm *kubevirtcorev1.VirtualMachine) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: kubevirtcorev1.SchemeGroupVersion.String(), Kind: "VirtualMachine",
		Name: vm.Name, UID: vm.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

// IPFor is the pod-network address the simulator gives a VM: stable for a
// namespace/name, inside 10.244.0.0/16.
func IPFor(namespace, name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace + "/" + name))
	sum := h.Sum32()
	return fmt.Sprintf("10.244.%d.%d", (sum>>8)%256, sum%254+1)
}
