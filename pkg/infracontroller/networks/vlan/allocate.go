package vlan

import (
	"context"
	"errors"
	"fmt"
	"maps"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/apply"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
)

// errExhausted tells that every id of the range is claimed.
var errExhausted = errors.New("every VLAN id is claimed")

// outcome is what a reconcile found, the input of the condition.
type outcome struct {
	// id is the claimed VLAN id; 0 when none.
	id int
	// claimedNow tells that the id was claimed by this reconcile.
	claimedNow bool
	// reason and message of ConditionVLANReady; true when reason is
	// ReasonVLANAllocated.
	reason, message string
}

// reconcileNormal claims the VLAN of tc, writes its network and records
// both in the status.
func (r *Reconciler) reconcileNormal(ctx context.Context, tc *infrav1alpha1.TenantCluster, namespace string, mine []claim) error {
	before := tc.Status.DeepCopy()
	out, err := r.claim(ctx, tc, namespace, mine)
	if err == nil {
		out.reason, out.message, err = r.ensureAttachment(ctx, tc, namespace, out.id)
	}
	switch {
	case errors.Is(err, errExhausted):
		out.reason = infrav1alpha1.ReasonVLANRangeExhausted
		out.message = fmt.Sprintf("all %d VLAN ids of range %s are claimed by other tenant clusters or still used by the VMs of deleted ones", r.Options.Range.Size(), r.Options.Range)
		err = nil
	case err != nil:
		out.reason, out.message = infrav1alpha1.ReasonFailed, err.Error()
	}
	r.setStatus(tc, out)
	r.announce(tc, before, out)
	return errors.Join(err, r.writeStatus(ctx, tc, before))
}

// claim returns the id tc holds, claiming one when it holds none.
func (r *Reconciler) claim(ctx context.Context, tc *infrav1alpha1.TenantCluster, namespace string, mine []claim) (outcome, error) {
	preferred := 0
	if tc.Status.VLAN != nil {
		preferred = int(tc.Status.VLAN.ID)
	}
	if len(mine) == 0 {
		// The cache may not show a claim this controller has just made:
		// ask the API server before claiming a second id.
		live, err := r.claimsOf(ctx, r.APIReader, tc.Name)
		if err != nil {
			return outcome{}, err
		}
		for _, c := range live {
			if c.namespace == namespace {
				mine = append(mine, c)
			}
		}
	}
	if len(mine) > 0 {
		kept := pick(mine, preferred)
		if len(mine) > 1 {
			// Claims are made one at a time per TenantCluster after a
			// live read, so only a copied Lease gets here; it is left for
			// the operator, not guessed away.
			log.FromContext(ctx).Error(errors.New("several VLAN claims"), "Keeping one VLAN claim of several", "vlan", kept.id, "claims", len(mine))
		}
		return outcome{id: kept.id}, nil
	}
	var all coordinationv1.LeaseList
	if err := r.Reader.List(ctx, &all, ctrlruntimeclient.InNamespace(r.Options.ClaimNamespace)); err != nil {
		return outcome{}, fmt.Errorf("failed to list the VLAN claims: %w", err)
	}
	taken := map[int]bool{}
	for _, c := range decodeClaims(all.Items) {
		taken[c.id] = true
	}
	for _, id := range candidates(r.Options.Range, taken, preferred) {
		//writepath:direct creating the claim is the claim: AlreadyExists means the id is taken and the next one is tried
		err := r.Writer.Create(ctx, newClaim(r.Options.ClaimNamespace, id, tc.Name, namespace))
		if err == nil {
			log.FromContext(ctx).Info("Claimed a VLAN", "vlan", id, "tenantNamespace", namespace)
			return outcome{id: id, claimedNow: true}, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return outcome{}, fmt.Errorf("failed to claim VLAN %d: %w", id, err)
		}
		log.FromContext(ctx).V(1).Info("VLAN claimed by another worker since the cache was read", "vlan", id)
	}
	return outcome{}, errExhausted
}

// ensureAttachment writes the NetworkAttachmentDefinition of VLAN id into
// the tenant namespace once the namespace belongs to tc, and returns the
// reason and message of the condition.
func (r *Reconciler) ensureAttachment(ctx context.Context, tc *infrav1alpha1.TenantCluster, namespace string, id int) (reason, message string, err error) {
	var ns corev1.Namespace
	if err := r.Reader.Get(ctx, types.NamespacedName{Name: namespace}, &ns); err != nil {
		if apierrors.IsNotFound(err) {
			return infrav1alpha1.ReasonVLANNamespacePending, fmt.Sprintf("VLAN %d is claimed; namespace %s does not exist yet", id, namespace), nil
		}
		return "", "", fmt.Errorf("failed to get namespace %s: %w", namespace, err)
	}
	if owner := ns.Labels[tenantcluster.OwnerLabel]; owner != tc.Name {
		return infrav1alpha1.ReasonVLANNamespacePending, fmt.Sprintf("VLAN %d is claimed; namespace %s is not owned by this TenantCluster (owner label %q)", id, namespace, owner), nil
	}
	if !ns.DeletionTimestamp.IsZero() || ns.Annotations[tenant.DeletingAnnotation] == "true" {
		return infrav1alpha1.ReasonVLANNamespacePending, fmt.Sprintf("VLAN %d is claimed; namespace %s is being deleted", id, namespace), nil
	}
	want, err := Attachment(r.Options, namespace, tc.Name, id)
	if err != nil {
		return "", "", err
	}
	have := want.DeepCopy()
	err = r.Reader.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		created, err := tenant.Target(r.Reader, r.APIReader, r.Writer).Create(ctx, want)
		if err != nil {
			return "", "", err
		}
		if created == apply.Foreign {
			return inTheWay(want)
		}
	case err != nil:
		return "", "", fmt.Errorf("failed to get NetworkAttachmentDefinition %s/%s: %w", namespace, want.GetName(), err)
	case have.GetLabels()[networks.Label] != LabelValue:
		// A tenant network of spec.networks of the same name.
		return inTheWay(want)
	default:
		if err := r.update(ctx, want, have); err != nil {
			return "", "", err
		}
	}
	return infrav1alpha1.ReasonVLANAllocated, fmt.Sprintf("VLAN %d, NetworkAttachmentDefinition %s/%s", id, namespace, want.GetName()), nil
}

// inTheWay returns the condition of a foreign object where want goes.
func inTheWay(want *unstructured.Unstructured) (reason, message string, err error) {
	return infrav1alpha1.ReasonVLANNetworkInTheWay, fmt.Sprintf("NetworkAttachmentDefinition %s/%s is not the VLAN network (a tenant network of spec.networks or one made by hand); rename or delete it",
		want.GetNamespace(), want.GetName()), nil
}

// update brings our have to want: a hand edit is undone.
func (r *Reconciler) update(ctx context.Context, want, have *unstructured.Unstructured) error {
	wantConfig, _, _ := unstructured.NestedString(want.Object, "spec", "config")
	haveConfig, _, _ := unstructured.NestedString(have.Object, "spec", "config")
	if wantConfig == haveConfig && maps.Equal(want.GetLabels(), have.GetLabels()) && maps.Equal(want.GetAnnotations(), have.GetAnnotations()) {
		return nil
	}
	updated := have.DeepCopy()
	updated.SetLabels(want.GetLabels())
	updated.SetAnnotations(want.GetAnnotations())
	if err := unstructured.SetNestedField(updated.Object, wantConfig, "spec", "config"); err != nil {
		return fmt.Errorf("failed to set the CNI configuration of %s: %w", want.GetName(), err)
	}
	//writepath:direct an update guarded by the resourceVersion read: the NetworkAttachmentDefinition's config is one string the CNI reads whole
	if err := r.Writer.Update(ctx, updated); err != nil {
		return fmt.Errorf("failed to update NetworkAttachmentDefinition %s/%s: %w", want.GetNamespace(), want.GetName(), err)
	}
	return nil
}
