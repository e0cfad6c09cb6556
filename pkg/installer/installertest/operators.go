package installertest

import (
	"context"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// operator describes one simulated operator.
type operator struct {
	gvk          schema.GroupVersionKind
	deployment   string   // name of the operator Deployment
	versionEnv   string   // env var of the operator that carries its version
	versionField []string // status field the version is reported in
	finalizer    string
	webhook      string // ValidatingWebhookConfiguration the operator deploys
	// statusSubresource tells whether the CRD has a status subresource:
	// KubeVirt's has, CDI's has not (cdi-operator updates the whole object).
	statusSubresource bool
}

// Finalizers of the simulated operators.
const (
	// KubeVirtFinalizer is the finalizer the simulated virt-operator puts on
	// KubeVirt resources.
	KubeVirtFinalizer = "foregroundDeleteKubeVirt"
	// CDIFinalizer is the finalizer the simulated cdi-operator puts on CDI
	// resources.
	CDIFinalizer = "operator.cdi.kubevirt.io"
)

var (
	kubeVirtOperator = operator{
		gvk:          schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "KubeVirt"},
		deployment:   "virt-operator",
		versionEnv:   "KUBEVIRT_VERSION",
		versionField: []string{"status", "observedKubeVirtVersion"},
		finalizer:    KubeVirtFinalizer,
		webhook:      "virt-api-validator",

		statusSubresource: true,
	}
	cdiOperator = operator{
		gvk:          schema.GroupVersionKind{Group: "cdi.kubevirt.io", Version: "v1beta1", Kind: "CDI"},
		deployment:   "cdi-operator",
		versionEnv:   "OPERATOR_VERSION",
		versionField: []string{"status", "observedVersion"},
		finalizer:    CDIFinalizer,
		webhook:      "cdi-api-validate",
	}
)

func (s *Simulator) operateKubeVirt(ctx context.Context) error {
	return s.operate(ctx, kubeVirtOperator)
}
func (s *Simulator) operateCDI(ctx context.Context) error { return s.operate(ctx, cdiOperator) }

// operate reconciles every resource of op's kind as op would.
func (s *Simulator) operate(ctx context.Context, op operator) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(op.gvk.GroupVersion().WithKind(op.gvk.Kind + "List"))
	if err := s.c.List(ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		obj := &list.Items[i]
		deployment, err := s.operatorDeployment(ctx, op, obj.GetNamespace())
		if err != nil {
			return err
		}
		if obj.GetDeletionTimestamp() != nil {
			if deployment != nil {
				if err := s.finalize(ctx, op, obj); err != nil {
					return err
				}
			}
			continue
		}
		if !slices.Contains(obj.GetFinalizers(), op.finalizer) {
			obj.SetFinalizers(append(obj.GetFinalizers(), op.finalizer))
			if err := s.c.Update(ctx, obj); err != nil {
				return err
			}
		}
		if deployment == nil || deployment.Status.AvailableReplicas == 0 || s.isHeld(op.gvk.Kind) {
			continue
		}
		if err := s.deploy(ctx, op, obj, deployment); err != nil {
			return err
		}
	}
	return nil
}

// operatorDeployment returns op's Deployment: in namespace, or anywhere for
// cluster-scoped resources; nil when there is none.
func (s *Simulator) operatorDeployment(ctx context.Context, op operator, namespace string) (*appsv1.Deployment, error) {
	list := &appsv1.DeploymentList{}
	opts := []ctrlruntimeclient.ListOption{ctrlruntimeclient.MatchingFields{"metadata.name": op.deployment}}
	if namespace != "" {
		opts = append(opts, ctrlruntimeclient.InNamespace(namespace))
	}
	if err := s.c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return &list.Items[0], nil
}

// deploy "deploys" the operands (a webhook configuration) and reports the
// resource Available at the operator's version.
func (s *Simulator) deploy(ctx context.Context, op operator, obj *unstructured.Unstructured, deployment *appsv1.Deployment) error {
	hook := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: op.webhook}}
	if err := s.c.Create(ctx, hook); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	version := ""
	for _, c := range deployment.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == op.versionEnv {
				version = e.Value
			}
		}
	}
	updated := obj.DeepCopy()
	status := map[string]any{
		"phase": "Deployed",
		"conditions": []any{
			map[string]any{"type": "Available", "status": "True", "reason": "AllComponentsReady"},
			map[string]any{"type": "Progressing", "status": "False", "reason": "AllComponentsReady"},
			map[string]any{"type": "Degraded", "status": "False", "reason": "AllComponentsReady"},
		},
	}
	if op.gvk.Kind == "KubeVirt" {
		status["observedGeneration"] = obj.GetGeneration()
	}
	updated.Object["status"] = status
	if err := unstructured.SetNestedField(updated.Object, version, op.versionField...); err != nil {
		return err
	}
	if equalStatus(obj, updated) {
		return nil
	}
	if !op.statusSubresource {
		return s.c.Update(ctx, updated)
	}
	return s.c.Status().Update(ctx, updated)
}

// finalize removes what op deployed and releases the resource.
func (s *Simulator) finalize(ctx context.Context, op operator, obj *unstructured.Unstructured) error {
	if !s.leavesLeftovers() {
		hook := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: op.webhook}}
		if err := s.c.Delete(ctx, hook); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	finalizers := slices.DeleteFunc(obj.GetFinalizers(), func(f string) bool { return f == op.finalizer })
	obj.SetFinalizers(finalizers)
	return s.c.Update(ctx, obj)
}

func equalStatus(a, b *unstructured.Unstructured) bool {
	as, _, _ := unstructured.NestedMap(a.Object, "status")
	bs, _, _ := unstructured.NestedMap(b.Object, "status")
	return equalJSON(as, bs)
}
