package vm

import (
	"os"
	"path/filepath"
	"testing"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// TestGoldenVMsPassKubeVirtAdmission submits every golden VirtualMachine to
// KubeVirt v1.9.0's own admission (virt-api's mutating and validating
// webhooks, with the feature gates and configuration of the KubeVirt CR
// kubevirt-installer renders) as a server-side dry run, after creating the
// instancetypes and preferences it references, then each DataVolume
// virt-controller makes of its dataVolumeTemplates (by virt-controller's own
// code) to CDI v1.65.0's own DataVolume admission. A refusal fails the test
// with KubeVirt's or CDI's message. A golden SSH Service goes through the API
// server's validation the same way.
func TestGoldenVMsPassKubeVirtAdmission(t *testing.T) {
	env := kubeVirtEnv(t)
	goldens, err := filepath.Glob(filepath.Join(goldenDir, "*.yaml"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no golden files found: %v", err)
	}
	for _, path := range goldens {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			v := &kubevirtcorev1.VirtualMachine{}
			if err := yaml.Unmarshal(splitDocuments(data)[0], v); err != nil {
				t.Fatal(err)
			}
			if err := env.AdmitVM(t.Context(), v); err != nil {
				t.Errorf("KubeVirt or CDI refuses the VM: %v", err)
			}
			if docs := splitDocuments(data); len(docs) == 3 {
				svc := &corev1.Service{}
				if err := yaml.Unmarshal(docs[2], svc); err != nil {
					t.Fatal(err)
				}
				if err := env.Client.Create(t.Context(), svc, ctrlruntimeclient.DryRunAll); err != nil {
					t.Errorf("the API server refuses the SSH Service: %v", err)
				}
			}
		})
	}
}
