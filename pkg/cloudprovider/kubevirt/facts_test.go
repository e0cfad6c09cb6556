package kubevirt

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

func TestTopologyOf(t *testing.T) {
	expr := func(key string, values ...string) corev1.TopologySelectorLabelRequirement {
		return corev1.TopologySelectorLabelRequirement{Key: key, Values: values}
	}
	term := func(exprs ...corev1.TopologySelectorLabelRequirement) corev1.TopologySelectorTerm {
		return corev1.TopologySelectorTerm{MatchLabelExpressions: exprs}
	}
	tests := []struct {
		name         string
		terms        []corev1.TopologySelectorTerm
		region, zone string
	}{
		{name: "no topology"},
		{name: "one region and zone", terms: []corev1.TopologySelectorTerm{term(expr(vm.LabelRegion, "eu"), expr(vm.LabelZone, "eu-1"))}, region: "eu", zone: "eu-1"},
		{name: "multi-valued zone is skipped, region kept", terms: []corev1.TopologySelectorTerm{term(expr(vm.LabelZone, "a", "b"), expr(vm.LabelRegion, "eu"))}, region: "eu"},
		{name: "zones of two terms are ambiguous", terms: []corev1.TopologySelectorTerm{term(expr(vm.LabelZone, "a")), term(expr(vm.LabelZone, "b"))}},
		{name: "the same zone twice is one", terms: []corev1.TopologySelectorTerm{term(expr(vm.LabelZone, "a")), term(expr(vm.LabelZone, "a"))}, zone: "a"},
		{name: "other keys are ignored", terms: []corev1.TopologySelectorTerm{term(expr("kubernetes.io/hostname", "n1"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			region, zone := topologyOf(&storagev1.StorageClass{AllowedTopologies: tt.terms})
			if region != tt.region || zone != tt.zone {
				t.Errorf("got %q/%q, want %q/%q", region, zone, tt.region, tt.zone)
			}
		})
	}
}

func TestLeastUsed(t *testing.T) {
	tests := []struct {
		counts map[string]int
		want   string
	}{
		{counts: nil, want: "a"},
		{counts: map[string]int{"a": 1}, want: "b"},
		{counts: map[string]int{"a": 1, "b": 1}, want: "c"},
		{counts: map[string]int{"a": 1, "b": 1, "c": 1}, want: "a"},
		{counts: map[string]int{"a": 2, "b": 1, "c": 1, "elsewhere": 0}, want: "b"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.counts), func(t *testing.T) {
			if got := leastUsed([]string{"a", "b", "c"}, tt.counts); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHeadersOf(t *testing.T) {
	got := headersOf(&corev1.Secret{Data: map[string][]byte{"X-Token": []byte("abc\n"), "Authorization": []byte("Basic x\r\n")}})
	want := []string{"Authorization: Basic x", "X-Token: abc"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

func TestCreateUsesInfraFacts(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	f.references(t)
	ctx := t.Context()
	rwx := f.namespace + "-shared"
	shadowed := f.namespace + "-shadowed"
	f.create(t,
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: rwx}, Provisioner: "example.com/nfs",
			AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
				{Key: vm.LabelRegion, Values: []string{"eu"}}, {Key: vm.LabelZone, Values: []string{"eu-1", "eu-2"}},
			}}}},
		&cdicorev1beta1.StorageProfile{ObjectMeta: metav1.ObjectMeta{Name: rwx}},
		// A namespaced and a cluster-scoped instancetype of the same name:
		// the namespaced one shadows the other.
		unstructuredObject("instancetype.kubevirt.io", "v1beta1", "VirtualMachineInstancetype", f.namespace, shadowed),
		unstructuredObject("instancetype.kubevirt.io", "v1beta1", "VirtualMachineClusterInstancetype", "", shadowed),
	)
	profile := &cdicorev1beta1.StorageProfile{}
	profile.Name = rwx
	if err := f.env.Client.Get(ctx, objectKey(profile), profile); err != nil {
		t.Fatal(err)
	}
	profile.Status.ClaimPropertySets = []cdicorev1beta1.ClaimPropertySet{{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)}}
	if err := f.env.Client.Status().Update(ctx, profile); err != nil {
		t.Fatal(err)
	}

	m := machine("worker-facts", f.spec(t, `
cloudProviderSpec:
  virtualMachine:
    instancetype: {name: `+shadowed+`}
    preference: {name: `+f.namespace+`-cluster-pref}
    template:
      primaryDisk:
        storageClassName: `+rwx+`
        storageAccessType: null
        extraHeadersSecretRef: headers
      secondaryDisks:
      - {size: 1Gi, storageClassName: `+f.storageClass+`}
`))
	if _, err := f.provider.Create(ctx, nil, m, f.data, testUserData); err != nil {
		t.Fatalf("Create: %v", err)
	}
	v, _ := f.objects(t, m.Name)
	got := factsView{
		Instancetype: v.Spec.Instancetype.Kind,
		Preference:   v.Spec.Preference.Kind,
		Region:       v.Labels[vm.LabelRegion],
		Zone:         v.Labels[vm.LabelZone],
	}
	// The root disk clones the image cache, which imports with the headers.
	if clone := v.Spec.DataVolumeTemplates[0].Spec.Source.PVC; clone == nil {
		t.Errorf("the root disk does not clone the image cache: %+v", v.Spec.DataVolumeTemplates[0].Spec.Source)
	} else {
		var cached cdicorev1beta1.DataVolume
		if err := f.env.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: clone.Namespace, Name: clone.Name}, &cached); err != nil {
			t.Fatal(err)
		}
		got.Headers = cached.Spec.Source.HTTP.ExtraHeaders
	}
	for _, dv := range v.Spec.DataVolumeTemplates {
		got.AccessModes = append(got.AccessModes, dv.Spec.Storage.AccessModes...)
	}
	want := factsView{
		Instancetype: "VirtualMachineInstancetype",
		Preference:   "VirtualMachineClusterPreference",
		Region:       "eu",
		AccessModes:  []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce},
		Headers:      []string{"X-A: 1", "X-B: 2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("facts in the VM (-want +got):\n%s", diff)
	}
}

type factsView struct {
	Instancetype, Preference, Region, Zone string
	AccessModes                            []corev1.PersistentVolumeAccessMode
	Headers                                []string
}

func TestCreateSpreadsZones(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	spec := f.spec(t, `
cloudProviderSpec: {virtualMachine: {location: {zones: [a, b, c]}}}`)
	var zones []string
	for i := range 4 {
		m := machine(fmt.Sprintf("spread-%d", i), spec)
		// Standalone Machines form a group of one; an md label from the
		// Machine would not change that, so give them a MachineDeployment.
		f.machineDeployment(t, m, "workers")
		if _, err := f.provider.Create(ctx, nil, m, f.data, testUserData); err != nil {
			t.Fatalf("Create %s: %v", m.Name, err)
		}
		v, _ := f.objects(t, m.Name)
		f.waitForCache(t, v, true)
		zones = append(zones, v.Labels[vm.LabelZone])
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "a"}, zones); diff != "" {
		t.Errorf("zones (-want +got):\n%s", diff)
	}
}

func TestAddDefaults(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	zoned := f.namespace + "-zoned"
	f.create(t, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: zoned}, Provisioner: "example.com/csi",
		AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: vm.LabelRegion, Values: []string{"eu"}}, {Key: vm.LabelZone, Values: []string{"eu-1"}},
		}}}})
	ns := f.namespace
	tests := []struct {
		name   string
		patch  string
		labels map[string]string
	}{
		{name: "storage class topology", patch: `
cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {storageClassName: ` + zoned + `}}}}`,
			labels: map[string]string{vm.LabelRegion: "eu", vm.LabelZone: "eu-1"}},
		{name: "explicit location wins", patch: `
cloudProviderSpec: {virtualMachine: {location: {zone: eu-9}, template: {primaryDisk: {storageClassName: ` + zoned + `}}}}`,
			labels: map[string]string{vm.LabelRegion: "eu", vm.LabelZone: "eu-9"}},
		{name: "zone spread sets no zone", patch: `
cloudProviderSpec: {virtualMachine: {location: {zones: [z1, z2]}, template: {primaryDisk: {storageClassName: ` + zoned + `}}}}`,
			labels: map[string]string{vm.LabelRegion: "eu"}},
		{name: "default names no zone: the Node carries none", patch: `
cloudProviderSpec: {virtualMachine: {location: {zone: default}, template: {primaryDisk: {storageClassName: ` + zoned + `}}}}`,
			labels: map[string]string{vm.LabelRegion: "eu"}},
		{name: "default names no zone: the Node carries none", patch: `
cloudProviderSpec: {virtualMachine: {location: {zone: default}, template: {primaryDisk: {storageClassName: ` + zoned + `}}}}`,
			labels: map[string]string{vm.LabelRegion: "eu"}},
		{name: "no topology"},
		{name: "missing storage class is left to Validate", patch: `
cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {storageClassName: nope}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := machineSpec(f.spec(t, tt.patch))
			out, err := f.provider.AddDefaults(t.Context(), nil, in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.labels, out.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]string{AnnotationClusterNamespace: ns}, out.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if in.Labels != nil || in.Annotations != nil {
				t.Error("AddDefaults changed its input")
			}
		})
	}
}
