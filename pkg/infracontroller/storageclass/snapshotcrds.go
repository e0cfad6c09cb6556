package storageclass

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
)

// CRDGVK is the kind of CustomResourceDefinitions, which the controller
// reads and creates in tenant clusters for the snapshot CRDs.
var CRDGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// InstalledByAnnotation, with value InstalledByValue, marks a snapshot CRD
// the controller created in a tenant cluster. It is not tenant.ManagedByLabel
// on purpose: the CRDs belong to the tenant cluster from then on and are
// never updated or deleted, not even when the TenantCluster goes (deleting
// a CRD deletes every object of its kind).
const (
	InstalledByAnnotation = "kkp-kubevirt.io/installed-by"
	InstalledByValue      = "infra-controller"
)

// ReasonSnapshotCRDsInstalled is the reason of the event recorded when the
// controller created snapshot CRDs in a tenant cluster.
const ReasonSnapshotCRDsInstalled = "SnapshotCRDsInstalled"

// establishTimeout bounds the wait for a created CRD to be served.
const establishTimeout = 30 * time.Second

// EventSink records events about tenant namespaces.
type EventSink interface {
	// Eventf records an event about the tenant cluster of namespace where
	// its owner sees it.
	Eventf(ctx context.Context, namespace, eventtype, reason, action, note string, args ...any)
}

// SnapshotCRDs returns the snapshot.storage.k8s.io CRDs the controller
// installs in tenant clusters that lack them: the manifests of
// addons.KubeVirtCSISnapshotCRDs with InstalledByAnnotation added.
func SnapshotCRDs() ([]*unstructured.Unstructured, error) {
	objs, err := addons.Manifests(addons.KubeVirtCSISnapshotCRDs)
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		if obj.GroupVersionKind() != CRDGVK {
			return nil, fmt.Errorf("addon %s holds %s %s, want only CustomResourceDefinitions", addons.KubeVirtCSISnapshotCRDs, obj.GetKind(), obj.GetName())
		}
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[InstalledByAnnotation] = InstalledByValue
		obj.SetAnnotations(annotations)
	}
	return objs, nil
}

// crdChecks remembers, per tenant namespace, the tenant client whose
// cluster was found with every snapshot CRD, so the CRDs are checked once
// per tenant cluster: again when its kubeconfig changes (a new client) or
// after it stopped serving VolumeSnapshotClasses (forget).
type crdChecks struct {
	mu   sync.Mutex
	done map[string]ctrlruntimeclient.Client
}

func (k *crdChecks) checked(namespace string, c ctrlruntimeclient.Client) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.done[namespace] == c
}

func (k *crdChecks) set(namespace string, c ctrlruntimeclient.Client) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.done == nil {
		k.done = map[string]ctrlruntimeclient.Client{}
	}
	k.done[namespace] = c
}

func (k *crdChecks) forget(namespace string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.done, namespace)
}

// ensureSnapshotCRDs creates the CRDs of crds that the tenant cluster of c
// lacks, waits until they are served and returns their names. A CRD that
// exists, whatever its version or content, is left alone: it may be a
// newer one the tenant admin installed.
func ensureSnapshotCRDs(ctx context.Context, c ctrlruntimeclient.Client, crds []*unstructured.Unstructured) ([]string, error) {
	var created []string
	var errs []error
	for _, crd := range crds {
		have := &metav1.PartialObjectMetadata{}
		have.SetGroupVersionKind(CRDGVK)
		err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(crd), have)
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("failed to get CustomResourceDefinition %s: %w", crd.GetName(), err))
			continue
		}
		//writepath:direct a snapshot CRD is created once and unlabelled: whoever holds one owns it, and AlreadyExists means theirs
		err = c.Create(ctx, crd.DeepCopy())
		switch {
		case apierrors.IsAlreadyExists(err):
			// Created by someone else in between: theirs.
		case err != nil:
			errs = append(errs, fmt.Errorf("failed to create CustomResourceDefinition %s: %w", crd.GetName(), err))
		default:
			created = append(created, crd.GetName())
		}
	}
	for _, name := range created {
		errs = append(errs, waitEstablished(ctx, c, name))
	}
	return created, errors.Join(errs...)
}

// waitEstablished waits until the API server serves the CRD name.
func waitEstablished(ctx context.Context, c ctrlruntimeclient.Client, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, establishTimeout, true, func(ctx context.Context) (bool, error) {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(CRDGVK)
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, crd); err != nil {
			return false, ctrlruntimeclient.IgnoreNotFound(err)
		}
		conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, cond := range conditions {
			if m, ok := cond.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("failed to wait for CustomResourceDefinition %s to be established: %w", name, err)
	}
	return nil
}

// ensureCRDs installs the snapshot CRDs the tenant cluster of namespace
// lacks, unless that cluster was checked before with client c, and reports
// what it installed in the log and through r.Events.
func (r *Reconciler) ensureCRDs(ctx context.Context, namespace string, c ctrlruntimeclient.Client) error {
	if r.crds.checked(namespace, c) {
		return nil
	}
	crds, err := SnapshotCRDs()
	if err != nil {
		return err
	}
	created, err := ensureSnapshotCRDs(ctx, c, crds)
	if len(created) > 0 {
		log.FromContext(ctx).Info("installed the snapshot CRDs the tenant cluster lacked; it still needs the snapshot-controller", "crds", created)
		if r.Events != nil {
			r.Events.Eventf(ctx, namespace, corev1.EventTypeNormal, ReasonSnapshotCRDsInstalled, "InstallSnapshotCRDs",
				"installed CustomResourceDefinitions %s in the tenant cluster, which lacked them; VolumeSnapshots also need the snapshot-controller there",
				strings.Join(created, ", "))
		}
	}
	if err != nil {
		return err
	}
	r.crds.set(namespace, c)
	return nil
}
