package storageclass

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// SnapshotClassGVK is the kind of the tenant VolumeSnapshotClasses.
var SnapshotClassGVK = schema.GroupVersionKind{Group: "snapshot.storage.k8s.io", Version: "v1", Kind: "VolumeSnapshotClass"}

// DesiredSnapshotClasses returns the tenant VolumeSnapshotClasses for the
// infra classes: with o.Snapshots, one per initialized class that names an
// infra VolumeSnapshotClass in SnapshotClassAnnotation, named like its
// tenant StorageClass; none without.
func DesiredSnapshotClasses(infra []storagev1.StorageClass, o Options) ([]*unstructured.Unstructured, error) {
	if !o.Snapshots {
		return nil, nil
	}
	objs, err := render(infra, o)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GroupVersionKind() == SnapshotClassGVK {
			out = append(out, obj)
		}
	}
	return out, nil
}

// syncSnapshotClasses creates, updates and deletes the tenant
// VolumeSnapshotClasses we made; classes without our label are never
// touched. A tenant cluster that does not serve VolumeSnapshotClasses is
// left alone (served false).
func syncSnapshotClasses(ctx context.Context, c ctrlruntimeclient.Client, desired []*unstructured.Unstructured) (served bool, err error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(SnapshotClassGVK.GroupVersion().WithKind(SnapshotClassGVK.Kind + "List"))
	if err := c.List(ctx, list); err != nil {
		if apierrors.IsNotFound(err) {
			if len(desired) > 0 {
				log.FromContext(ctx).Info("the tenant cluster serves no snapshot.storage.k8s.io/v1 VolumeSnapshotClasses (a CRD of the kind that serves no v1?); the snapshot CRDs are checked again at the next reconcile")
			}
			return false, nil
		}
		return false, fmt.Errorf("failed to list VolumeSnapshotClasses: %w", err)
	}
	have := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		have[list.Items[i].GetName()] = &list.Items[i]
	}
	want := map[string]bool{}
	var errs []error
	for _, w := range desired {
		want[w.GetName()] = true
		errs = append(errs, syncSnapshotClass(ctx, c, have[w.GetName()], w))
	}
	for name, h := range have {
		if !want[name] {
			errs = append(errs, tenant.Target(c, c, c).Delete(ctx, h, "a VolumeSnapshotClass no longer wanted"))
		}
	}
	return true, errors.Join(errs...)
}

// syncSnapshotClass writes want with package apply; have is the class of
// want's name, nil when there is none.
func syncSnapshotClass(ctx context.Context, c ctrlruntimeclient.Client, have, want *unstructured.Unstructured) error {
	_, err := tenant.Target(c, c, c).Known(ctx, have, want)
	return err
}

// snapshotDefaultAnnotation marks the default VolumeSnapshotClass of a
// driver.
const snapshotDefaultAnnotation = "snapshot.storage.kubernetes.io/is-default-class"

// enforcement is the KubeVirt CSI driver's storage-class enforcement
// configuration (its INFRA_STORAGE_CLASS_ENFORCEMENT), as upstream's
// pkg/util reads it.
type enforcement struct {
	AllowAll               bool              `json:"allowAll"`
	AllowDefault           bool              `json:"allowDefault"`
	StorageSnapshotMapping []snapshotMapping `json:"storageSnapshotMapping"`
}

type snapshotMapping struct {
	VolumeSnapshotClasses []string `json:"volumeSnapshotClasses"`
	StorageClasses        []string `json:"storageClasses"`
}

// StorageClassEnforcement returns the driver's storage-class enforcement
// for the infra classes: every infra class allowed, and a snapshot of a
// volume of an initialized class that names an infra VolumeSnapshotClass
// in SnapshotClassAnnotation taken with that class (the infra default
// class for the others). It is empty when no class names one, which keeps
// the driver's default (the infra default VolumeSnapshotClass for all).
func StorageClassEnforcement(infra []storagev1.StorageClass) (string, error) {
	e := enforcement{AllowAll: true}
	for i := range infra {
		sc := &infra[i]
		name := strings.TrimSpace(sc.Annotations[SnapshotClassAnnotation])
		if sc.Annotations[InitializeAnnotation] != "true" || !sc.DeletionTimestamp.IsZero() || name == "" {
			continue
		}
		e.StorageSnapshotMapping = append(e.StorageSnapshotMapping, snapshotMapping{VolumeSnapshotClasses: []string{name}, StorageClasses: []string{sc.Name}})
	}
	if len(e.StorageSnapshotMapping) == 0 {
		return "", nil
	}
	sort.Slice(e.StorageSnapshotMapping, func(a, b int) bool {
		return e.StorageSnapshotMapping[a].StorageClasses[0] < e.StorageSnapshotMapping[b].StorageClasses[0]
	})
	out, err := yaml.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("failed to encode the storage-class enforcement: %w", err)
	}
	return string(out), nil
}
