package installer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

var kubeVirtGVK = schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "KubeVirt"}

// inOrder checks that the parts occur in s in the given order.
func inOrder(s string, parts ...string) error {
	at := 0
	for _, p := range parts {
		i := strings.Index(s[at:], p)
		if i < 0 {
			return fmt.Errorf("%q missing or out of order", p)
		}
		at += i + len(p)
	}
	return nil
}

func kubeVirtResource(t *testing.T, c ctrlruntimeclient.Client) *unstructured.Unstructured {
	t.Helper()
	kv := &unstructured.Unstructured{}
	kv.SetGroupVersionKind(kubeVirtGVK)
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: "kubevirt", Name: "kubevirt"}, kv); err != nil {
		t.Fatalf("failed to get the KubeVirt resource: %v", err)
	}
	return kv
}

func checkInstalledObjects(t *testing.T, c ctrlruntimeclient.Client) {
	t.Helper()
	for ns, level := range map[string]string{
		"kubevirt": "privileged", "cdi": "baseline", "kubevirt-kkp-infra": "restricted", "kubevirt-kkp-machines": "restricted",
	} {
		namespace := &corev1.Namespace{}
		if err := c.Get(t.Context(), types.NamespacedName{Name: ns}, namespace); err != nil {
			t.Fatal(err)
		}
		if namespace.Labels["pod-security.kubernetes.io/enforce"] != level || namespace.Labels["app.kubernetes.io/managed-by"] != "kubevirt-installer" {
			t.Errorf("namespace %s labels %v", ns, namespace.Labels)
		}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(t.Context(), types.NamespacedName{Name: "kubevirts.kubevirt.io"}, crd); err != nil {
		t.Fatal(err)
	}
	if crd.Labels["app.kubernetes.io/managed-by"] != "kubevirt-installer" {
		t.Errorf("CRD labels %v", crd.Labels)
	}
	gates, _, _ := unstructured.NestedStringSlice(kubeVirtResource(t, c).Object, "spec", "configuration", "developerConfiguration", "featureGates")
	want := []string{"ExperimentalIgnitionSupport", "DataVolumes", "LiveMigration", "CPUManager", "CPUNodeDiscovery", "Sidecar", "Snapshot", "HotplugVolumes", "HostDevices"}
	if diff := cmp.Diff(want, gates); diff != "" {
		t.Errorf("feature gates (-want +got):\n%s", diff)
	}
}

func operatorEnv(t *testing.T, c ctrlruntimeclient.Client) map[string]string {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: "kubevirt", Name: "virt-operator"}, dep); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"image": dep.Spec.Template.Spec.Containers[0].Image}
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	return env
}

func checkUpgrade(t *testing.T, c ctrlruntimeclient.Client, inst *Installer) {
	t.Helper()
	if env := operatorEnv(t, c); env["KUBEVIRT_VERSION"] != "v1.8.4" {
		t.Fatalf("precondition: operator at %s", env["KUBEVIRT_VERSION"])
	}
	results, err := inst.Install(t.Context(), Options{Upgrade: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{
		{"cni-plugins", ActionUnchanged, 1}, {"multus", ActionUnchanged, 1},
		{"kubevirt", ActionUpgraded, 2}, {"cdi", ActionUnchanged, 1},
		{"infra-controller", ActionUnchanged, 1}, {"machine-controller", ActionUnchanged, 1},
	}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	env := operatorEnv(t, c)
	for k, v := range map[string]string{
		"image":               "quay.io/kubevirt/virt-operator:v1.9.0",
		"VIRT_OPERATOR_IMAGE": "quay.io/kubevirt/virt-operator:v1.9.0",
		"VIRT_HANDLER_IMAGE":  "quay.io/kubevirt/virt-handler:v1.9.0",
		"KUBEVIRT_VERSION":    "v1.9.0",
	} {
		if env[k] != v {
			t.Errorf("operator %s = %q, want %q", k, env[k], v)
		}
	}
	observed, _, _ := unstructured.NestedString(kubeVirtResource(t, c).Object, "status", "observedKubeVirtVersion")
	if observed != "v1.9.0" {
		t.Errorf("install returned before the operator rolled out v1.9.0 (observed %q)", observed)
	}
}

func checkReconfigure(t *testing.T, c ctrlruntimeclient.Client, inst *Installer) {
	t.Helper()
	emulation := func() bool {
		on, _, _ := unstructured.NestedBool(kubeVirtResource(t, c).Object, "spec", "configuration", "developerConfiguration", "useEmulation")
		return on
	}
	results, err := inst.Install(t.Context(), Options{Values: map[string]map[string]any{"kubevirt": {"useEmulation": true}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Result{"kubevirt", ActionConfigured, 3}, results[2]); diff != "" || !emulation() {
		t.Errorf("emulation on: (-want +got):\n%s", diff)
	}
	for _, r := range []Result{results[0], results[1], results[3], results[4], results[5]} {
		if r.Action != ActionUnchanged {
			t.Errorf("%s was %s", r.Component, r.Action)
		}
	}
	results, err = inst.Install(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Result{"kubevirt", ActionConfigured, 4}, results[2]); diff != "" || emulation() {
		t.Errorf("values reset: (-want +got):\n%s", diff)
	}
}

func checkUninstall(t *testing.T, c ctrlruntimeclient.Client, inst *Installer) {
	t.Helper()
	out := inst.Out.(*syncBuffer)
	if err := inst.Uninstall(t.Context(), UninstallOptions{}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	err := inOrder(out.String(), "[1/4] delete operator resources",
		"deleting CDI cdi", "CDI cdi removed", "deleting KubeVirt kubevirt/kubevirt", "KubeVirt kubevirt/kubevirt removed",
		"[2/4] delete leftover operand objects", "deleted leftover ValidatingWebhookConfiguration virt-api-validator",
		"[3/4] uninstall Helm releases", "machine-controller: uninstalled", "infra-controller: uninstalled", "cdi: uninstalled", "kubevirt: uninstalled", "multus: uninstalled", "cni-plugins: uninstalled",
		"[4/4] delete namespaces", "deleting namespace kubevirt-kkp-machines", "deleting namespace kubevirt-kkp-infra",
		"deleting namespace cdi", "deleting namespace kubevirt")
	if err != nil {
		t.Errorf("%v\n%s", err, out.String())
	}
	for _, name := range []string{"virt-api-validator", "cdi-api-validate"} {
		err := c.Get(t.Context(), types.NamespacedName{Name: name}, &admissionregistrationv1.ValidatingWebhookConfiguration{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("leftover webhook %s: %v", name, err)
		}
	}
	var left []string
	for key := range snapshot(t, c) {
		left = append(left, key)
	}
	want := []string{
		"CustomResourceDefinition /cdis.cdi.kubevirt.io",
		"CustomResourceDefinition /kubevirts.kubevirt.io",
		"CustomResourceDefinition /machinedeployments.cluster.k8s.io",
		"CustomResourceDefinition /machines.cluster.k8s.io",
		"CustomResourceDefinition /machinesets.cluster.k8s.io",
		"CustomResourceDefinition /network-attachment-definitions.k8s.cni.cncf.io",
		"CustomResourceDefinition /tenantclusters.infra.kkp-kubevirt.io",
	}
	if diff := cmp.Diff(want, left, cmpSorted); diff != "" {
		t.Errorf("left after uninstall without --crds (-want +got):\n%s", diff)
	}
}
