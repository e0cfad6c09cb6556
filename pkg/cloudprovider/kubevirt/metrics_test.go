package kubevirt

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMachineMetricsLabels(t *testing.T) {
	p := New(Options{})
	tests := []struct {
		name  string
		patch string
		want  map[string]string
	}{
		{name: "cpus and memory", want: map[string]string{
			"cpus": "2", "memoryMIB": "4096", "osImage": "http://images.example.com/ubuntu.img", "instancetype": "", "flavor": "",
		}},
		{name: "vcpus, instancetype, flavor, credentials in the URL", patch: `
cloudProviderSpec:
  virtualMachine:
    flavor: {name: small}
    instancetype: {name: standard-2}
    template:
      cpus: null
      memory: 1500M
      vcpus: {cores: 4}
      primaryDisk: {osImage: "https://user:secret@images.example.com/img.qcow2"}
`, want: map[string]string{
			"cpus": "4", "memoryMIB": "1430", "osImage": "https://images.example.com/img.qcow2", "instancetype": "standard-2", "flavor": "small",
		}},
		{name: "values by reference are empty", patch: `
cloudProviderSpec:
  virtualMachine:
    template:
      cpus: {secretKeyRef: {namespace: kube-system, name: s, key: cpus}}
      memory: {configMapKeyRef: {namespace: kube-system, name: c, key: memory}}
`, want: map[string]string{
			"cpus": "", "memoryMIB": "", "osImage": "http://images.example.com/ubuntu.img", "instancetype": "", "flavor": "",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := machine("m", specFor(t, []byte("kubeconfig: never read"), "ns", "sc", tt.patch))
			got, err := p.MachineMetricsLabels(m)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}

	for name, m := range map[string]*clusterv1alpha1.Machine{
		"no value": {ObjectMeta: metav1.ObjectMeta{Name: "m"}},
		"not JSON": machine("m", []byte("{")),
		"not ours": machine("m", mustJSON(t, map[string]any{"cloudProvider": "aws", "cloudProviderSpec": map[string]any{}})),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := p.MachineMetricsLabels(m); err == nil {
				t.Error("got no error")
			}
		})
	}
}

// TestProviderRemembersSpecs checks that the Machines of one template
// share one parse of their providerSpec.
func TestProviderRemembersSpecs(t *testing.T) {
	p := New(Options{})
	spec := specFor(t, []byte("kubeconfig: never read"), "ns", "sc", "")
	other := specFor(t, []byte("kubeconfig: never read"), "ns", "sc", "cloudProviderSpec: {virtualMachine: {template: {cpus: \"4\"}}}")
	for i, raw := range [][]byte{spec, spec, other, []byte("{")} {
		_, _ = p.MachineMetricsLabels(machine(fmt.Sprintf("m-%d", i), raw))
	}
	if got := p.specs.Len(); got != 2 {
		t.Errorf("the Provider remembers %d parsed specs for 2 valid ones, want 2", got)
	}
}

func TestGetWithoutInfraClients(t *testing.T) {
	p := New(Options{})
	if _, err := p.Get(t.Context(), nil, &clusterv1alpha1.Machine{}, nil); err == nil {
		t.Error("Get without infra clients: got no error")
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
