package simulator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Annotations of kube-controller-manager's volume binder and kube-scheduler.
const (
	// AnnotationStorageProvisioner names the provisioner that is to
	// provision a PVC; the volume binder sets it.
	AnnotationStorageProvisioner = "volume.kubernetes.io/storage-provisioner"
	// AnnotationSelectedNode is the node a WaitForFirstConsumer PVC is
	// provisioned for; the scheduler sets it.
	AnnotationSelectedNode = "volume.kubernetes.io/selected-node"
	// annotationProvisionedBy marks a PV with the provisioner that made it.
	annotationProvisionedBy = "pv.kubernetes.io/provisioned-by"
)

// provisioner plays an external volume provisioner for the storage classes
// of the given provisioner names: a PVC kube-controller-manager's volume
// binder hands to it gets a PersistentVolume pre-bound to it (the binder
// then binds both), and a released volume of reclaim policy Delete is
// deleted. The volumes are nowhere; the pods that mount them do not run.
type provisioner struct {
	client ctrlruntimeclient.Client
	names  []string
}

func (p *provisioner) ours(name string) bool {
	for _, n := range p.names {
		if n == name {
			return true
		}
	}
	return false
}

// Reconcile provisions the PVC of the request.
func (p *provisioner) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	if err := p.client.Get(ctx, req.NamespacedName, pvc); err != nil {
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	if pvc.Spec.VolumeName != "" || pvc.DeletionTimestamp != nil || !p.ours(pvc.Annotations[AnnotationStorageProvisioner]) {
		return reconcile.Result{}, nil
	}
	class := &storagev1.StorageClass{}
	if err := p.client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: ptr.Deref(pvc.Spec.StorageClassName, "")}, class); err != nil {
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	if ptr.Deref(class.VolumeBindingMode, storagev1.VolumeBindingImmediate) == storagev1.VolumeBindingWaitForFirstConsumer &&
		pvc.Annotations[AnnotationSelectedNode] == "" {
		return reconcile.Result{}, nil
	}
	pv := volumeFor(pvc, class)
	if err := p.client.Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
		return reconcile.Result{}, fmt.Errorf("failed to provision PersistentVolume %s for PVC %s: %w", pv.Name, req, err)
	}
	return reconcile.Result{}, nil
}

// volumeFor returns the PersistentVolume provisioned for a PVC.
func volumeFor(pvc *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "pvc-" + string(pvc.UID),
			Annotations: map[string]string{annotationProvisionedBy: class.Provisioner},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   pvc.Spec.AccessModes,
			VolumeMode:                    pvc.Spec.VolumeMode,
			StorageClassName:              class.Name,
			PersistentVolumeReclaimPolicy: ptr.Deref(class.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete),
			MountOptions:                  class.MountOptions,
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/simulator/" + pvc.Namespace + "/" + pvc.Name},
			},
		},
	}
	if node := pvc.Annotations[AnnotationSelectedNode]; node != "" {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}}}
	}
	return pv
}

// volumeReclaimer deletes the released volumes the provisioner made whose
// reclaim policy is Delete, as an external provisioner does.
type volumeReclaimer struct {
	client ctrlruntimeclient.Client
	names  func(string) bool
}

func (r *volumeReclaimer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pv := &corev1.PersistentVolume{}
	if err := r.client.Get(ctx, req.NamespacedName, pv); err != nil {
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	if pv.Status.Phase != corev1.VolumeReleased || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
		!r.names(pv.Annotations[annotationProvisionedBy]) {
		return reconcile.Result{}, nil
	}
	if err := r.client.Delete(ctx, pv, ctrlruntimeclient.Preconditions{UID: &pv.UID}); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, fmt.Errorf("failed to delete released PersistentVolume %s: %w", pv.Name, err)
	}
	return reconcile.Result{}, nil
}
