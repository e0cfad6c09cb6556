package kubevirt

import (
	"testing"

	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// unstructuredObject returns an object of a kind without Go type here, with
// the smallest spec KubeVirt accepts for it.
func unstructuredObject(group, version, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
	u.SetNamespace(namespace)
	u.SetName(name)
	if spec, ok := minimalSpecs[kind]; ok {
		u.Object["spec"] = runtime.DeepCopyJSONValue(spec)
	}
	return u
}

// minimalSpecs are the smallest specs KubeVirt's schemas and admission accept
// for the kinds a providerSpec references.
var minimalSpecs = map[string]any{
	"VirtualMachineInstancePreset":      map[string]any{"selector": map[string]any{}, "domain": map[string]any{"devices": map[string]any{}}},
	"VirtualMachineInstancetype":        minimalInstancetype,
	"VirtualMachineClusterInstancetype": minimalInstancetype,
	"VirtualMachinePreference":          map[string]any{},
	"VirtualMachineClusterPreference":   map[string]any{},
}

var minimalInstancetype = map[string]any{"cpu": map[string]any{"guest": int64(1)}, "memory": map[string]any{"guest": "1Gi"}}

// references creates, in the fixture's namespace and cluster-wide, one
// object of every kind a spec can reference.
func (f *fixture) references(t testing.TB) {
	t.Helper()
	ns := f.namespace
	it := "instancetype.kubevirt.io"
	f.create(t,
		unstructuredObject("kubevirt.io", "v1", "VirtualMachineInstancePreset", ns, "small"),
		unstructuredObject(it, "v1beta1", "VirtualMachineInstancetype", ns, "ns-type"),
		unstructuredObject(it, "v1beta1", "VirtualMachineClusterInstancetype", "", ns+"-cluster-type"),
		unstructuredObject(it, "v1beta1", "VirtualMachinePreference", ns, "ns-pref"),
		unstructuredObject(it, "v1beta1", "VirtualMachineClusterPreference", "", ns+"-cluster-pref"),
		unstructuredObject("k8s.cni.cncf.io", "v1", "NetworkAttachmentDefinition", ns, "storage-net"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "headers", Namespace: ns}, Data: map[string][]byte{"X-B": []byte("2\n"), "X-A": []byte("1")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "basic-auth", Namespace: ns}},
		&cdicorev1beta1.StorageProfile{ObjectMeta: metav1.ObjectMeta{Name: f.storageClass}},
	)
}

func TestValidate(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	f.references(t)
	ns := f.namespace
	vmPath := "spec.providerSpec.value.cloudProviderSpec.virtualMachine."
	tests := []struct {
		name  string
		patch string
		// want lists the parts of the terminal message; none means valid.
		want []string
	}{
		{name: "minimal spec"},
		{name: "everything exists", patch: `
cloudProviderSpec:
  virtualMachine:
    flavor: {name: small}
    instancetype: {name: ns-type}
    preference: {name: ` + ns + `-cluster-pref, kind: VirtualMachineClusterPreference}
    networks: [{name: storage-net}]
    template:
      primaryDisk:
        extraHeadersSecretRef: headers
        dataVolumeSecretRef: basic-auth
`},
		{name: "missing preset", patch: `
cloudProviderSpec: {virtualMachine: {flavor: {name: large}}}`,
			want: []string{vmPath + `flavor.name: VirtualMachineInstancePreset "large" not found in namespace "` + ns + `"`}},
		{name: "missing instancetype", patch: `
cloudProviderSpec: {virtualMachine: {instancetype: {name: huge}}}`,
			want: []string{vmPath + `instancetype.name: neither VirtualMachineInstancetype "huge" in namespace "` + ns + `" nor VirtualMachineClusterInstancetype "huge" exists`}},
		{name: "instancetype of another kind", patch: `
cloudProviderSpec: {virtualMachine: {instancetype: {name: ns-type, kind: VirtualMachineClusterInstancetype}}}`,
			want: []string{vmPath + `instancetype.name: VirtualMachineClusterInstancetype "ns-type" not found`}},
		{name: "missing preference", patch: `
cloudProviderSpec: {virtualMachine: {preference: {name: fast, kind: VirtualMachinePreference}}}`,
			want: []string{vmPath + `preference.name: VirtualMachinePreference "fast" not found in namespace "` + ns + `"`}},
		{name: "everything missing at once", patch: `
cloudProviderSpec:
  virtualMachine:
    networks: [{name: other/net}]
    template:
      primaryDisk:
        storageClassName: slow
        extraHeadersSecretRef: nope
      secondaryDisks: [{size: 1Gi, storageClassName: slower, storageAccessType: ReadWriteOnce}]
`, want: []string{
			vmPath + `template.primaryDisk.storageClassName: StorageClass "slow" not found`,
			vmPath + `template.secondaryDisks[0].storageClassName: StorageClass "slower" not found`,
			vmPath + `networks[0].name: NetworkAttachmentDefinition "other/net" not found`,
			vmPath + `template.primaryDisk.extraHeadersSecretRef: Secret "nope" not found in namespace "` + ns + `"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.provider.Validate(t.Context(), nil, machineSpec(f.spec(t, tt.patch)))
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("got %v, want valid", err)
				}
				return
			}
			wantTerminal(t, err, tt.want...)
		})
	}
}

func TestInvalidSpecsAreTerminal(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	tests := []struct {
		name string
		spec []byte
		want string
	}{
		{name: "no providerSpec value", want: "spec.providerSpec.value"},
		{name: "malformed kubeconfig", spec: f.spec(t, `
cloudProviderSpec: {auth: {kubeconfig: {value: bm90IGEga3ViZWNvbmZpZw==}}}`), want: "auth.kubeconfig"},
		{name: "unknown field", spec: f.spec(t, `
cloudProviderSpec: {virtualMachine: {colour: blue}}`), want: "colour"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := machine("invalid", tt.spec)
			if tt.spec == nil {
				m.Spec.ProviderSpec.Value = nil
			}
			_, err := f.provider.Get(t.Context(), nil, m, f.data)
			wantTerminal(t, err, tt.want)
			wantTerminal(t, f.provider.Validate(t.Context(), nil, m.Spec), tt.want)
			_, err = f.provider.Create(t.Context(), nil, m, f.data, testUserData)
			wantTerminal(t, err, tt.want)
			_, err = f.provider.Cleanup(t.Context(), nil, m, f.data)
			wantTerminal(t, err, tt.want)
		})
	}
	// Nothing was created for any of them.
	f.wantCounts(t, 0, 0)
}
