package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// renderedVMs decodes the VirtualMachines of render's output, a YAML stream
// or a JSON List.
func renderedVMs(t *testing.T, output string) []*kubevirtcorev1.VirtualMachine {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(output), 4096)
	var vms []*kubevirtcorev1.VirtualMachine
	for {
		var doc struct {
			Kind  string                 `json:"kind"`
			Items []runtime.RawExtension `json:"items"`
		}
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return vms
		} else if err != nil {
			t.Fatalf("failed to decode render's output: %v", err)
		}
		if len(raw.Raw) == 0 {
			continue
		}
		if err := utilyaml.Unmarshal(raw.Raw, &doc); err != nil {
			t.Fatal(err)
		}
		objs := []runtime.RawExtension{raw}
		if doc.Kind == "List" {
			objs = doc.Items
		}
		for _, obj := range objs {
			vm := &kubevirtcorev1.VirtualMachine{}
			if err := utilyaml.Unmarshal(obj.Raw, vm); err != nil {
				t.Fatal(err)
			}
			if vm.Kind == "VirtualMachine" {
				vms = append(vms, vm)
			}
		}
	}
}

// admitRendered submits every VM of render's output to KubeVirt's admission
// and its DataVolumes to CDI's.
func admitRendered(t *testing.T, env *envtest.Env, output string) {
	t.Helper()
	vms := renderedVMs(t, output)
	if len(vms) == 0 {
		t.Fatal("render printed no VirtualMachine")
	}
	for _, vm := range vms {
		if err := env.AdmitVM(t.Context(), vm); err != nil {
			t.Errorf("KubeVirt or CDI refuses VM %s/%s: %v", vm.Namespace, vm.Name, err)
		}
	}
}

// TestRenderedVMsPassKubeVirtAdmission submits every VM of render's golden
// outputs to KubeVirt v1.9.0's own admission with the installer's KubeVirt
// configuration, and the DataVolumes virt-controller makes of it to CDI
// v1.65.0's.
func TestRenderedVMsPassKubeVirtAdmission(t *testing.T) {
	env := kubeVirt.Env(t)
	goldens, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range goldens {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// The warnings render printed on stderr follow the objects.
		output, _, _ := strings.Cut(string(data), stderrMarker)
		// Only render's outputs hold VM manifests (catalog's is a table).
		if !strings.Contains(output, "kind: VirtualMachine\n") && !strings.Contains(output, `"kind": "VirtualMachine"`) {
			continue
		}
		checked++
		t.Run(filepath.Base(path), func(t *testing.T) { admitRendered(t, env, output) })
	}
	if checked < 4 {
		t.Errorf("checked %d render outputs, want at least 4", checked)
	}
}

// TestVMPatchJudgedByKubeVirt: a VM patch render accepts can still yield a
// VM KubeVirt's own admission refuses; on a cluster that refusal is the
// Create error of every Machine of the MachineDeployment.
func TestVMPatchJudgedByKubeVirt(t *testing.T) {
	env := kubeVirt.Env(t)
	data, err := os.ReadFile(filepath.Join("testdata", "vm-patch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	md := strings.Replace(string(data), `[{"op": "add", "path": "/spec/template/spec/domain/clock", "value": {"timezone": "Europe/Berlin"}}]`,
		`[{"op": "add", "path": "/spec/template/spec/domain/devices/disks/0/bootOrder", "value": 0}]`, 1)
	if md == string(data) {
		t.Fatal("testdata/vm-patch.yaml no longer holds the patch this test replaces")
	}
	t.Setenv("KUBEVIRT_KUBECONFIG", base64.StdEncoding.EncodeToString([]byte(testKubeconfig)))
	var out, errOut bytes.Buffer
	cmd := newRootCmd(strings.NewReader(md), &out, &errOut)
	cmd.SetArgs([]string{"render", "-f", "-"})
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("render: %v", err)
	}
	vms := renderedVMs(t, out.String())
	if len(vms) != 1 {
		t.Fatalf("render printed %d VirtualMachines, want 1", len(vms))
	}
	err = env.AdmitVM(t.Context(), vms[0])
	if err == nil || !strings.Contains(err.Error(), "boot order") {
		t.Fatalf("KubeVirt's admission = %v, want a refusal naming the boot order", err)
	}
}
