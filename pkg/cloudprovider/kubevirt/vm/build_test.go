package vm

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func TestNames(t *testing.T) {
	if got, want := UserDataSecretName("worker-1"), "userdata-worker-1"; got != want {
		t.Errorf("UserDataSecretName() = %q, want %q", got, want)
	}
	if got, want := ProviderID("worker-1"), "kubevirt://worker-1"; got != want {
		t.Errorf("ProviderID() = %q, want %q", got, want)
	}
	if got, want := SecondaryDataVolumeName("worker-1", "data"), "worker-1-data"; got != want {
		t.Errorf("SecondaryDataVolumeName() = %q, want %q", got, want)
	}
}

func TestBuildRejectsIncompleteInput(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Input)
	}{
		{name: "no settings", modify: func(in *Input) { in.Settings = nil }},
		{name: "no machine name", modify: func(in *Input) { in.Machine.Name = "" }},
		{name: "no namespace", modify: func(in *Input) { in.Facts.Namespace = "" }},
		{name: "two default networks", modify: func(in *Input) {
			in.Settings.Networks = []config.NetworkRef{{Name: "a", Default: true}, {Name: "b", Default: true}}
		}},
		{name: "unknown image source", modify: func(in *Input) { in.Settings.PrimaryDisk.Source.Kind = "ftp" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := testInput()
			tc.modify(&in)
			objs, err := Build(in)
			if err == nil {
				t.Fatalf("Build() = %+v, want an error", objs)
			}
			if objs != nil {
				t.Errorf("Build() returned objects along with error %v", err)
			}
		})
	}
}

func TestBuildIdentity(t *testing.T) {
	in := testInput()
	objs, err := Build(in)
	if err != nil {
		t.Fatalf("Build() error = %v", err)
	}

	vm := objs.VirtualMachine
	if vm.APIVersion != "kubevirt.io/v1" || vm.Kind != "VirtualMachine" {
		t.Errorf("VM TypeMeta = %+v, want kubevirt.io/v1 VirtualMachine", vm.TypeMeta)
	}
	if vm.Name != "worker-1" || vm.Namespace != "cluster-abc123" {
		t.Errorf("VM = %s/%s, want cluster-abc123/worker-1", vm.Namespace, vm.Name)
	}
	if vm.Spec.RunStrategy == nil || *vm.Spec.RunStrategy != kubevirtcorev1.RunStrategyAlways {
		t.Errorf("runStrategy = %v, want Always", vm.Spec.RunStrategy)
	}
	if got := vm.Spec.Template.Spec.TerminationGracePeriodSeconds; got == nil || *got != 30 {
		t.Errorf("terminationGracePeriodSeconds = %v, want 30", got)
	}
	if vm.Spec.Template.Spec.Affinity != nil {
		t.Errorf("affinity = %+v, want nil without presets", vm.Spec.Template.Spec.Affinity)
	}
}

func TestBuildUserDataSecret(t *testing.T) {
	in := testInput()
	objs, err := Build(in)
	if err != nil {
		t.Fatalf("Build() error = %v", err)
	}

	secret := objs.UserDataSecret
	if secret.APIVersion != "v1" || secret.Kind != "Secret" {
		t.Errorf("Secret TypeMeta = %+v, want v1 Secret", secret.TypeMeta)
	}
	if secret.Name != "userdata-worker-1" || secret.Namespace != "cluster-abc123" {
		t.Errorf("Secret = %s/%s, want cluster-abc123/userdata-worker-1", secret.Namespace, secret.Name)
	}
	if secret.Type != corev1.SecretTypeOpaque {
		t.Errorf("Secret type = %q, want Opaque", secret.Type)
	}
	if diff := cmp.Diff(map[string][]byte{"userdata": []byte(in.UserData)}, secret.Data); diff != "" {
		t.Errorf("Secret data mismatch (-want +got):\n%s", diff)
	}
	if len(secret.OwnerReferences) != 0 {
		t.Errorf("Secret has owner references %v, want none", secret.OwnerReferences)
	}
	volume := objs.VirtualMachine.Spec.Template.Spec.Volumes[1]
	if ref := volume.CloudInitNoCloud; ref == nil || ref.UserDataSecretRef == nil || ref.UserDataSecretRef.Name != secret.Name {
		t.Errorf("cloud-init volume = %+v, want a reference to Secret %s", volume, secret.Name)
	}
}

func TestBuildDoesNotAliasInput(t *testing.T) {
	in := testInput()
	in.Settings.Affinity.NodeAffinity = config.NodePreset{Type: config.AffinityHard, Key: "foo", Values: []string{"bar"}}
	in.Settings.PrimaryDisk.Source.ExtraHeaders = []string{"X-A: 1"}
	in.Machine.Labels = map[string]string{"team": "a"}

	objs, err := Build(in)
	if err != nil {
		t.Fatalf("Build() error = %v", err)
	}
	spec := objs.VirtualMachine.Spec
	spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values[0] = "changed"
	spec.DataVolumeTemplates[0].Spec.Source.HTTP.ExtraHeaders[0] = "changed"
	objs.VirtualMachine.Labels["team"] = "changed"
	spec.Template.Spec.Domain.Resources.Limits[corev1.ResourceMemory] = spec.Template.Spec.Domain.Resources.Limits[corev1.ResourceCPU]

	if got := in.Settings.Affinity.NodeAffinity.Values[0]; got != "bar" {
		t.Errorf("node preset value = %q after changing the VM, want bar", got)
	}
	if got := in.Settings.PrimaryDisk.Source.ExtraHeaders[0]; got != "X-A: 1" {
		t.Errorf("extra header = %q after changing the VM, want X-A: 1", got)
	}
	if got := in.Machine.Labels["team"]; got != "a" {
		t.Errorf("machine label = %q after changing the VM, want a", got)
	}
	if got := spec.Template.Spec.Domain.Resources.Requests[corev1.ResourceMemory]; got.String() != "4Gi" {
		t.Errorf("memory request = %s after changing the limit, want 4Gi", got.String())
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	labelKeys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	annotationKeys := []string{"x.io/1", "x.io/2", "cdi.kubevirt.io/a", "cdi.kubevirt.io/b", "y.io/3"}
	classes := []string{"fast", "slow", "shared"}
	headers := []string{"X-C: 3", "X-A: 1", "X-B: 2"}

	build := func(reverse bool) []byte {
		t.Helper()
		in := testInput()
		in.Machine.Labels = map[string]string{}
		in.Machine.Annotations = map[string]string{}
		in.Facts.AccessModes = map[string]corev1.PersistentVolumeAccessMode{}
		ordered := func(keys []string) []string {
			out := append([]string(nil), keys...)
			if reverse {
				for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
					out[i], out[j] = out[j], out[i]
				}
			}
			return out
		}
		for _, k := range ordered(labelKeys) {
			in.Machine.Labels[k] = "v-" + k
		}
		for _, k := range ordered(annotationKeys) {
			in.Machine.Annotations[k] = "v-" + k
		}
		for _, c := range ordered(classes) {
			in.Facts.AccessModes[c] = corev1.ReadWriteMany
		}
		in.Facts.ExtraHeaders = ordered(headers)
		in.Settings.PrimaryDisk.Source.ExtraHeadersSecretRef = "headers"
		in.Settings.SecondaryDisks = []config.SecondaryDiskSettings{{Name: "data", DiskSettings: config.DiskSettings{StorageClassName: "shared"}}}

		objs, err := Build(in)
		if err != nil {
			t.Fatalf("Build() error = %v", err)
		}
		return marshalObjects(t, objs)
	}

	first := build(false)
	for i := range 20 {
		if got := build(i%2 == 1); !bytes.Equal(first, got) {
			t.Fatalf("build %d differs:\n%s", i, cmp.Diff(string(first), string(got)))
		}
	}
}

// marshalObjects renders the VM, the Secret and the SSH Service (when there
// is one) as one multi-document YAML.
func marshalObjects(t *testing.T, objs *Objects) []byte {
	t.Helper()
	parts := []any{objs.VirtualMachine, objs.UserDataSecret}
	if objs.SSHService != nil {
		parts = append(parts, objs.SSHService)
	}
	docs := make([][]byte, 0, len(parts))
	for _, part := range parts {
		doc, err := yaml.Marshal(part)
		if err != nil {
			t.Fatalf("failed to marshal %T: %v", part, err)
		}
		docs = append(docs, doc)
	}
	return bytes.Join(docs, []byte("---\n"))
}
