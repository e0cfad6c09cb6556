package machinedeployment

import (
	"context"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// AnnotationInfraRevision carries, on the template of a MachineSet (and so
// on its Machines), the provider's revision of what the template depends
// on in the infra cluster (Options.TemplateRevision). A MachineDeployment
// whose revision changes rolls out a new MachineSet, as if its template
// had changed.
const AnnotationInfraRevision = "machinedeployment.kkp-kubevirt.io/infra-revision"

// TemplateRevisionFunc returns the revision of a Machine template's infra
// dependencies, "" when it has none.
type TemplateRevisionFunc func(ctx context.Context, spec clusterv1alpha1.MachineSpec) (string, error)

// withInfraRevision puts the template's infra revision into the in-memory
// template of md, so the MachineSet lookup, the template hash and new
// MachineSets all see it. When the revision cannot be read now, the one of
// the MachineSet whose template otherwise matches is kept: an unreachable
// infra cluster must not start a rollout. A MachineSet made before
// revisions existed (or before the template had one) is stamped with the
// current revision instead of being rolled. invalid is the provider's
// terminal error about the template's spec (cloudprovider.IsTerminal), nil
// when the provider did not refuse it; the rollout goes on regardless and
// the Machines report the error too.
func (r *reconciler) withInfraRevision(ctx context.Context, md *clusterv1alpha1.MachineDeployment, sets []*clusterv1alpha1.MachineSet) (invalid, err error) {
	if r.templateRevision == nil {
		return nil, nil
	}
	current, revErr := r.templateRevision(ctx, md.Spec.Template.Spec)
	if _, terminal := cloudprovider.IsTerminal(revErr); terminal {
		invalid = revErr
	}
	matching, err := setOfTemplate(md, sets)
	if err != nil {
		return invalid, err
	}
	if revErr != nil {
		log.FromContext(ctx).Info("keeping the infra revision of the MachineDeployment: it cannot be read now", "error", revErr.Error())
		if matching == nil {
			return invalid, nil
		}
		current = matching.Spec.Template.Annotations[AnnotationInfraRevision]
	}
	setInfraRevision(&md.Spec.Template, current)
	if matching == nil || current == "" {
		return invalid, nil
	}
	if _, stamped := matching.Spec.Template.Annotations[AnnotationInfraRevision]; stamped {
		return invalid, nil
	}
	base := matching.DeepCopy()
	setInfraRevision(&matching.Spec.Template, current)
	if err := r.client.Patch(ctx, matching, ctrlruntimeclient.MergeFromWithOptions(base, ctrlruntimeclient.MergeFromWithOptimisticLock{})); err != nil {
		return invalid, fmt.Errorf("failed to record the infra revision on MachineSet %s: %w", matching.Name, err)
	}
	r.pending.patched(types.NamespacedName{Namespace: md.Namespace, Name: md.Name}, matching)
	return invalid, nil
}

// setOfTemplate returns the live MachineSet whose template equals md's
// when the infra revision annotation is left out of both, or nil. After a
// rollout for a new infra revision several do; the one of the highest
// MachineDeployment revision is the current one.
func setOfTemplate(md *clusterv1alpha1.MachineDeployment, sets []*clusterv1alpha1.MachineSet) (*clusterv1alpha1.MachineSet, error) {
	want := md.Spec.Template.DeepCopy()
	setInfraRevision(want, "")
	var found *clusterv1alpha1.MachineSet
	for _, ms := range sets {
		if ms.DeletionTimestamp != nil {
			continue
		}
		have := ms.Spec.Template.DeepCopy()
		setInfraRevision(have, "")
		same, err := sameTemplate(want, have)
		if err != nil {
			return nil, err
		}
		if same && (found == nil || revisionOf(ms.Annotations) > revisionOf(found.Annotations)) {
			found = ms
		}
	}
	return found, nil
}

// setInfraRevision sets the revision annotation of a template, removing it
// (and an emptied map) for "".
func setInfraRevision(t *clusterv1alpha1.MachineTemplateSpec, revision string) {
	if revision == "" {
		delete(t.Annotations, AnnotationInfraRevision)
		if len(t.Annotations) == 0 {
			t.Annotations = nil
		}
		return
	}
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[AnnotationInfraRevision] = revision
}

// allDeployments enqueues every MachineDeployment: an infra object a
// template revision may depend on changed.
func (r *reconciler) allDeployments(ctx context.Context, _ ctrlruntimeclient.Object) []reconcile.Request {
	list := &clusterv1alpha1.MachineDeploymentList{}
	if err := r.client.List(ctx, list); err != nil {
		log.FromContext(ctx).Error(err, "failed to list MachineDeployments for an infra change")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, md := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: md.Namespace, Name: md.Name}})
	}
	return out
}
