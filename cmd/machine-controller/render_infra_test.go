package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// kubeconfigFile writes a kubeconfig of env whose context namespace is ns
// and returns its path.
func kubeconfigFile(t *testing.T, env *envtest.Env, ns string) string {
	t.Helper()
	kubeconfig, err := env.Kubeconfig(ns)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "infra.kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRenderWithInfraCluster looks facts up on a real API server: the
// StorageProfile's access mode, the instancetype's kind and the namespace of
// the kubeconfig's context, proves that nothing is written there and that
// KubeVirt's admission accepts the VM.
func TestRenderWithInfraCluster(t *testing.T) {
	env := kubeVirt.Env(t)
	ctx := t.Context()
	ns := env.CreateNamespace(t, "cluster-render")
	path := kubeconfigFile(t, env, ns)
	it := infraObject("instancetype.kubevirt.io/v1beta1", "VirtualMachineClusterInstancetype", "", "render-standard-2",
		map[string]any{"cpu": map[string]any{"guest": int64(2)}, "memory": map[string]any{"guest": "4Gi"}})
	createAll(t, env,
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "render-shared"}, Provisioner: "example.com/nfs"},
		&cdicorev1beta1.StorageProfile{ObjectMeta: metav1.ObjectMeta{Name: "render-shared"}},
		it,
	)
	profile := &cdicorev1beta1.StorageProfile{}
	if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: "render-shared"}, profile); err != nil {
		t.Fatal(err)
	}
	profile.Status.ClaimPropertySets = []cdicorev1beta1.ClaimPropertySet{{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)}}
	if err := env.Client.Status().Update(ctx, profile); err != nil {
		t.Fatal(err)
	}

	input := strings.NewReplacer("STORAGECLASS", "render-shared", "INSTANCETYPE", "render-standard-2").Replace(infraSpec)
	t.Setenv("KUBEVIRT_KUBECONFIG", "")
	var out bytes.Buffer
	cmd := newRootCmd(strings.NewReader(input), &out, &bytes.Buffer{})
	cmd.SetArgs([]string{"render", "-f", "-", "--infra-kubeconfig", path})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("render: %v", err)
	}
	got := out.String()
	for _, want := range []string{
		"namespace: " + ns,
		"kind: VirtualMachineClusterInstancetype",
		"- ReadWriteMany",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	t.Run("KubeVirt admits the rendered VM", func(t *testing.T) { admitRendered(t, env, got) })
	vms := &unstructured.UnstructuredList{}
	vms.SetAPIVersion("kubevirt.io/v1")
	vms.SetKind("VirtualMachineList")
	if err := env.Client.List(ctx, vms, ctrlruntimeclient.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	secrets := &corev1.SecretList{}
	if err := env.Client.List(ctx, secrets, ctrlruntimeclient.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(vms.Items) != 0 || len(secrets.Items) != 0 {
		t.Errorf("render wrote to the infra cluster: %d VMs, %d Secrets", len(vms.Items), len(secrets.Items))
	}

	// A missing instancetype is reported with its field path, as Validate would.
	missing := strings.NewReplacer("STORAGECLASS", "render-shared", "INSTANCETYPE", "does-not-exist").Replace(infraSpec)
	cmd = newRootCmd(strings.NewReader(missing), &bytes.Buffer{}, &bytes.Buffer{})
	cmd.SetArgs([]string{"render", "-f", "-", "--infra-kubeconfig", path})
	err := cmd.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "virtualMachine.instancetype") {
		t.Errorf("error = %v, want one naming virtualMachine.instancetype", err)
	}
}

const infraSpec = `apiVersion: cluster.k8s.io/v1alpha1
kind: MachineDeployment
metadata:
  name: infra-md
spec:
  template:
    spec:
      providerSpec:
        value:
          cloudProvider: kubevirt
          cloudProviderSpec:
            clusterName: render
            virtualMachine:
              instancetype:
                name: INSTANCETYPE
              template:
                primaryDisk:
                  osImage: http://images.example.com/ubuntu.img
                  size: 10Gi
                  storageClassName: STORAGECLASS
          operatingSystem: ubuntu
          operatingSystemSpec: {}
`
