package readiness

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Check is one readiness condition of an installed component.
type Check interface {
	// Object names the checked object, for example
	// "DaemonSet kube-system/kube-multus-ds".
	Object() string
	// Evaluate reads the object and reports whether it is ready. An error
	// means the object could not be read.
	Evaluate(ctx context.Context, c ctrlruntimeclient.Reader) (Result, error)
}

// Result is the outcome of one evaluation.
type Result struct {
	// Ready is true when the object is ready.
	Ready bool
	// Message says what is missing; it is "ready" when Ready.
	Message string
}

func ready() Result             { return Result{Ready: true, Message: "ready"} }
func waiting(msg string) Result { return Result{Message: msg} }
func notFound() Result          { return Result{Message: "not found"} }
func describe(kind string, key types.NamespacedName) string {
	if key.Namespace == "" {
		return kind + " " + key.Name
	}
	return kind + " " + key.String()
}

// DeploymentRollout is ready when every replica of the Deployment runs the
// current template and is available.
type DeploymentRollout struct {
	// Key names the Deployment.
	Key types.NamespacedName
}

// Object names the Deployment.
func (d DeploymentRollout) Object() string { return describe("Deployment", d.Key) }

// Evaluate reads the Deployment's rollout status.
func (d DeploymentRollout) Evaluate(ctx context.Context, c ctrlruntimeclient.Reader) (Result, error) {
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, d.Key, dep); err != nil {
		if apierrors.IsNotFound(err) {
			return notFound(), nil
		}
		return Result{}, fmt.Errorf("failed to get %s: %w", d.Object(), err)
	}
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	st := dep.Status
	switch {
	case st.ObservedGeneration < dep.Generation:
		return waiting(fmt.Sprintf("generation %d not yet observed", dep.Generation)), nil
	case st.UpdatedReplicas < want:
		return waiting(fmt.Sprintf("%d of %d replicas updated", st.UpdatedReplicas, want)), nil
	case st.Replicas > st.UpdatedReplicas:
		return waiting(fmt.Sprintf("%d old replicas still running", st.Replicas-st.UpdatedReplicas)), nil
	case st.AvailableReplicas < want:
		return waiting(fmt.Sprintf("%d of %d replicas available", st.AvailableReplicas, want)), nil
	}
	return ready(), nil
}

// DaemonSetRollout is ready when every scheduled pod of the DaemonSet runs
// the current template and is available.
type DaemonSetRollout struct {
	// Key names the DaemonSet.
	Key types.NamespacedName
}

// Object names the DaemonSet.
func (d DaemonSetRollout) Object() string { return describe("DaemonSet", d.Key) }

// Evaluate reads the DaemonSet's rollout status.
func (d DaemonSetRollout) Evaluate(ctx context.Context, c ctrlruntimeclient.Reader) (Result, error) {
	ds := &appsv1.DaemonSet{}
	if err := c.Get(ctx, d.Key, ds); err != nil {
		if apierrors.IsNotFound(err) {
			return notFound(), nil
		}
		return Result{}, fmt.Errorf("failed to get %s: %w", d.Object(), err)
	}
	st := ds.Status
	want := st.DesiredNumberScheduled
	switch {
	case st.ObservedGeneration < ds.Generation:
		return waiting(fmt.Sprintf("generation %d not yet observed", ds.Generation)), nil
	case st.UpdatedNumberScheduled < want:
		return waiting(fmt.Sprintf("%d of %d pods updated", st.UpdatedNumberScheduled, want)), nil
	case st.NumberAvailable < want:
		return waiting(fmt.Sprintf("%d of %d pods available", st.NumberAvailable, want)), nil
	}
	return ready(), nil
}

// OperatorResource is ready when the operator reports its custom resource
// Available, neither Progressing nor Degraded, with the wanted version rolled
// out and the latest generation observed.
type OperatorResource struct {
	// GVK is the resource's kind.
	GVK schema.GroupVersionKind
	// Key names the resource; Namespace is empty for cluster-scoped kinds.
	Key types.NamespacedName
	// VersionField is the status field path of the rolled-out version.
	VersionField []string
	// Version is the version that must be rolled out; empty skips the
	// version check.
	Version string
}

// Object names the resource.
func (o OperatorResource) Object() string { return describe(o.GVK.Kind, o.Key) }

// Evaluate reads the resource's status.
func (o OperatorResource) Evaluate(ctx context.Context, c ctrlruntimeclient.Reader) (Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(o.GVK)
	if err := c.Get(ctx, o.Key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return notFound(), nil
		}
		return Result{}, fmt.Errorf("failed to get %s: %w", o.Object(), err)
	}
	if obj.GetDeletionTimestamp() != nil {
		return waiting("being deleted"), nil
	}
	conds := conditions(obj)
	if degraded := conds["Degraded"]; degraded.status == "True" {
		return waiting(degraded.describe("Degraded")), nil
	}
	if o.Version != "" {
		got, _, _ := unstructured.NestedString(obj.Object, o.VersionField...)
		if got != o.Version {
			if got == "" {
				return waiting(fmt.Sprintf("version %s not yet rolled out", o.Version)), nil
			}
			return waiting(fmt.Sprintf("version %s rolled out, waiting for %s", got, o.Version)), nil
		}
	}
	if observed, found, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration"); found && observed < obj.GetGeneration() {
		return waiting(fmt.Sprintf("generation %d not yet observed", obj.GetGeneration())), nil
	}
	if available := conds["Available"]; available.status != "True" {
		return waiting(available.describe("Available")), nil
	}
	if progressing := conds["Progressing"]; progressing.status == "True" {
		return waiting(progressing.describe("Progressing")), nil
	}
	return ready(), nil
}

// condition is one entry of status.conditions.
type condition struct {
	status, reason, message string
}

// describe renders a condition for people, for example
// "Available is False (DeploymentInProgress): virt-api is not ready".
func (c condition) describe(kind string) string {
	if c.status == "" {
		return kind + " not reported yet"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is %s", kind, c.status)
	if c.reason != "" {
		fmt.Fprintf(&b, " (%s)", c.reason)
	}
	if c.message != "" {
		fmt.Fprintf(&b, ": %s", c.message)
	}
	return b.String()
}

// conditions indexes status.conditions by type.
func conditions(obj *unstructured.Unstructured) map[string]condition {
	out := map[string]condition{}
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := m["type"].(string)
		c := condition{}
		c.status, _ = m["status"].(string)
		c.reason, _ = m["reason"].(string)
		c.message, _ = m["message"].(string)
		out[typ] = c
	}
	return out
}
