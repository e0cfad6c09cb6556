package vm

import (
	"os"
	"path/filepath"
	"testing"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	"sigs.k8s.io/yaml"
)

// TestGoldenVMsPassKubeVirtAdmission submits every golden VirtualMachine to
// KubeVirt v1.9.0's own admission (virt-api's mutating and validating
// webhooks, with the feature gates and configuration of the KubeVirt CR
// kubevirt-installer renders) as a server-side dry run, after creating the
// instancetypes and preferences it references. A refusal fails the test
// with KubeVirt's message.
func TestGoldenVMsPassKubeVirtAdmission(t *testing.T) {
	env := envtest.Start(t, envtest.WithKubeVirt())
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
				t.Errorf("KubeVirt refuses the VM: %v", err)
			}
		})
	}
}
