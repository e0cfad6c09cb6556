package main

import (
	"bytes"
	"strings"
	"testing"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// TestRenderAsksTheInfraCluster: with --infra-kubeconfig, render submits
// what it prints with server-side dry-run, so KubeVirt's real admission
// judges the VM and CDI's the DataVolumes: a VM KubeVirt refuses (a disk
// without a volume, through the VM patch annotation) or a DataVolume CDI
// refuses (an image URL scheme CDI cannot import) exits non-zero with the
// refusing component's reason, one both admit
// exits 0 without the offline note, and neither leaves anything on the
// infra cluster.
func TestRenderAsksTheInfraCluster(t *testing.T) {
	env := envtest.Start(t, envtest.WithKubeVirt())
	ns := env.CreateNamespace(t, "cluster-verdict")
	path := kubeconfigFile(t, env, ns)
	t.Setenv("KUBEVIRT_KUBECONFIG", "")
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "verdict", Annotations: map[string]string{
		"storageclass.kubernetes.io/is-default-class": "true",
	}}, Provisioner: "example.com/nfs"}
	if err := env.Client.Create(t.Context(), class); err != nil {
		t.Fatal(err)
	}
	render := func(input string) (string, error) {
		var out, errOut bytes.Buffer
		cmd := newRootCmd(strings.NewReader(input), &out, &errOut)
		cmd.SetArgs([]string{"render", "-f", "-", "--infra-kubeconfig", path})
		err := cmd.ExecuteContext(t.Context())
		return errOut.String(), err
	}

	stderr, err := render(machineDoc)
	if err != nil {
		t.Fatalf("render of an admissible Machine: %v\n%s", err, stderr)
	}
	if strings.Contains(stderr, "no verdict asked") {
		t.Errorf("render with an infra cluster says no verdict was asked:\n%s", stderr)
	}

	refused := strings.Replace(machineDoc, "metadata: {name: m}", `metadata: {name: m, annotations: {kkp-kubevirt.io/vm-patch: '[{"op":"add","path":"/spec/template/spec/domain/devices/disks/-","value":{"name":"nosuchvolume","disk":{"bus":"virtio"}}}]'}}`, 1)
	stderr, err = render(refused)
	if err == nil || !strings.Contains(err.Error(), "the infra cluster refused VirtualMachine "+ns+"/m") || !strings.Contains(err.Error(), "'nosuchvolume' not found") {
		t.Errorf("render of a VM KubeVirt refuses: %v, want KubeVirt's refusal\n%s", err, stderr)
	}

	// KubeVirt admits a VM whose root disk template, patched past the
	// provider spec's validation, has a URL scheme CDI cannot import; CDI's
	// admission refuses the DataVolume.
	refused = strings.Replace(machineDoc, "metadata: {name: m}", `metadata: {name: m, annotations: {kkp-kubevirt.io/vm-patch: '[{"op":"replace","path":"/spec/dataVolumeTemplates/0/spec/source/http/url","value":"ftp://i/u.img"}]'}}`, 1)
	stderr, err = render(refused)
	if err == nil || !strings.Contains(err.Error(), "the infra cluster refused DataVolume "+ns+"/") || !strings.Contains(err.Error(), "Invalid source URL scheme") {
		t.Errorf("render of a DataVolume CDI refuses: %v, want CDI's refusal\n%s", err, stderr)
	}

	for _, list := range []ctrlruntimeclient.ObjectList{&kubevirtcorev1.VirtualMachineList{}, &cdicorev1beta1.DataVolumeList{}, &corev1.SecretList{}} {
		if err := env.Client.List(t.Context(), list, ctrlruntimeclient.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if n := meta.LenList(list); n != 0 {
			t.Errorf("render stored %d %T on the infra cluster", n, list)
		}
	}
}
