package envtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// componentTokenLifetime is how long the tokens of upstream components'
// ServiceAccounts are valid: longer than any test or demo runs.
const componentTokenLifetime = 7 * 24 * time.Hour

// Generate runs one of the upstream tools (KubeVirtTool, CDITool) and
// decodes the List of objects it prints.
func Generate(ctx context.Context, tool string, args ...string) ([]*unstructured.Unstructured, error) {
	dir, err := UpstreamDir(ctx)
	if err != nil {
		return nil, err
	}
	stdout, err := generated(ctx, filepath.Join(dir, tool), args)
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(stdout, &list); err != nil {
		return nil, fmt.Errorf("%s %s printed no List: %w", tool, strings.Join(args, " "), err)
	}
	out := make([]*unstructured.Unstructured, 0, len(list.Items))
	for _, item := range list.Items {
		out = append(out, &unstructured.Unstructured{Object: item})
	}
	return out, nil
}

// createAll creates objs, leaving those that exist alone.
func (e *Env) createAll(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		if err := e.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("failed to create %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// ensureNamespace creates the namespace unless it exists.
func (e *Env) ensureNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := e.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create namespace %s: %w", name, err)
	}
	return nil
}

// identity is a ServiceAccount of an upstream component with the RBAC its
// generator gives it.
type identity struct {
	tool      string   // the generator
	rbacArgs  []string // its arguments that print the component's RBAC
	namespace string
	name      string // the ServiceAccount
}

// componentConfig installs id's RBAC (ServiceAccount, roles, bindings; kept
// when they exist) and returns a REST config and a kubeconfig file acting as
// the ServiceAccount, so the component runs with exactly the permissions
// upstream gives it. A token bound to boundPod carries the pod's node in
// the user's extra info, as the tokens kubelets mount do.
func (e *Env) componentConfig(ctx context.Context, id identity, boundPod *corev1.Pod) (*rest.Config, string, error) {
	rbac, err := Generate(ctx, id.tool, id.rbacArgs...)
	if err != nil {
		return nil, "", err
	}
	for _, obj := range rbac {
		inNamespace(obj, id.namespace)
	}
	if err := e.createAll(ctx, rbac); err != nil {
		return nil, "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: id.namespace, Name: id.name}}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(componentTokenLifetime / time.Second)),
	}}
	file := id.name
	if boundPod != nil {
		req.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: boundPod.Name, UID: boundPod.UID}
		file += "-" + boundPod.Name
	}
	if err := e.Client.SubResource("token").Create(ctx, sa, req); err != nil {
		return nil, "", fmt.Errorf("failed to request a token for ServiceAccount %s/%s: %w", id.namespace, id.name, err)
	}
	cfg := rest.AnonymousClientConfig(e.Config)
	cfg.BearerToken = req.Status.Token
	kubeconfig, err := kubeconfigFor(cfg, id.namespace)
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(e.workDir, file+".kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return nil, "", fmt.Errorf("failed to write the kubeconfig of %s: %w", id.name, err)
	}
	return cfg, path, nil
}

// startComponent starts an upstream binary as a process of this control
// plane; Stop ends it.
func (e *Env) startComponent(ctx context.Context, spec processSpec) error {
	dir, err := UpstreamDir(ctx)
	if err != nil {
		return err
	}
	spec.path = filepath.Join(dir, spec.path)
	p, err := startProcess(ctx, spec, e.workDir)
	if err != nil {
		return err
	}
	e.components = append(e.components, p)
	return nil
}

// ComponentErrors reports upstream components (webhooks, controllers) that
// have exited although the control plane still runs, with the end of their
// logs.
func (e *Env) ComponentErrors() error {
	var errs []error
	for _, p := range e.components {
		errs = append(errs, p.exitedEarly())
	}
	return errors.Join(errs...)
}

// ComponentLog returns what the named component (e.g. "virt-controller")
// has logged so far.
func (e *Env) ComponentLog(name string) (string, error) {
	for _, p := range e.components {
		if p.name == name {
			out, err := os.ReadFile(p.logPath)
			if err != nil {
				return "", fmt.Errorf("failed to read the log of %s: %w", name, err)
			}
			return string(out), nil
		}
	}
	return "", fmt.Errorf("no component %s runs in this control plane", name)
}

// inNamespace completes what an operator completes in the generated RBAC of
// its components: the namespace of their ServiceAccount subjects.
func inNamespace(obj *unstructured.Unstructured, namespace string) {
	subjects, _, _ := unstructured.NestedSlice(obj.Object, "subjects")
	for _, s := range subjects {
		if subject, ok := s.(map[string]any); ok && subject["kind"] == "ServiceAccount" && subject["namespace"] == nil {
			subject["namespace"] = namespace
		}
	}
	if subjects != nil {
		_ = unstructured.SetNestedSlice(obj.Object, subjects, "subjects")
	}
}
