package kubevirt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestTemplateCapacityFromInfra reads the sizes a template leaves to the
// infra cluster: a flavor's preset, a namespaced instancetype that
// shadows a cluster-scoped one of the same name, a requested cluster
// instancetype; and a missing one, which leaves the sizes unknown. A
// template that sizes its VM itself costs no infra request.
func TestTemplateCapacityFromInfra(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	clusterName := f.namespace + "-it"
	f.create(t,
		&kubevirtcorev1.VirtualMachineInstancePreset{
			ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: f.namespace},
			Spec: kubevirtcorev1.VirtualMachineInstancePresetSpec{
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{"kubevirt.io/flavor": "small"}},
				Domain: &kubevirtcorev1.DomainSpec{Resources: kubevirtcorev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("6Gi"),
				}}},
			},
		},
		&instancetypev1beta1.VirtualMachineInstancetype{
			ObjectMeta: metav1.ObjectMeta{Name: clusterName, Namespace: f.namespace},
			Spec:       instancetypeSpec(4, "8Gi"),
		},
		&instancetypev1beta1.VirtualMachineClusterInstancetype{
			ObjectMeta: metav1.ObjectMeta{Name: clusterName},
			Spec:       instancetypeSpec(16, "64Gi"),
		},
	)
	for _, tc := range []struct {
		name, patch string
		want        capacityView
	}{
		{name: "template", want: capacityView{CPU: "2", Memory: "4Gi", Disk: "20Gi"}},
		{
			name:  "flavor",
			patch: `cloudProviderSpec: {virtualMachine: {flavor: {name: small}, template: {cpus: null, memory: null}}}`,
			want:  capacityView{CPU: "3", Memory: "6Gi", Disk: "20Gi"},
		},
		{
			name:  "missing flavor",
			patch: `cloudProviderSpec: {virtualMachine: {flavor: {name: large}, template: {cpus: null, memory: null}}}`,
			want:  capacityView{Disk: "20Gi"},
		},
		{
			name:  "namespaced instancetype first",
			patch: `cloudProviderSpec: {virtualMachine: {instancetype: {name: ` + clusterName + `}}}`,
			want:  capacityView{CPU: "4", Memory: "8Gi", Disk: "20Gi"},
		},
		{
			name:  "requested cluster instancetype",
			patch: `cloudProviderSpec: {virtualMachine: {instancetype: {name: ` + clusterName + `, kind: VirtualMachineClusterInstancetype}}}`,
			want:  capacityView{CPU: "16", Memory: "64Gi", Disk: "20Gi"},
		},
		{
			name:  "missing instancetype",
			patch: `cloudProviderSpec: {virtualMachine: {instancetype: {name: nowhere}}}`,
			want:  capacityView{Disk: "20Gi"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.provider.TemplateCapacity(ctx, machineSpec(f.spec(t, tc.patch)))
			if err != nil {
				t.Fatalf("TemplateCapacity: %v", err)
			}
			if diff := cmp.Diff(tc.want, capacityViewOf(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	f.counter.Reset()
	if _, err := f.provider.TemplateCapacity(ctx, machineSpec(f.spec(t, ""))); err != nil {
		t.Fatal(err)
	}
	if got := f.counter.Counts(); len(got) != 0 {
		t.Errorf("a template that sizes its VM cost infra requests: %v", got)
	}
	_, err := f.provider.TemplateCapacity(ctx, machineSpec(f.spec(t, `cloudProviderSpec: {virtualMachine: {template: {cpus: nonsense}}}`)))
	wantTerminal(t, err, "cpus")
}

func instancetypeSpec(cpus uint32, memory string) instancetypev1beta1.VirtualMachineInstancetypeSpec {
	return instancetypev1beta1.VirtualMachineInstancetypeSpec{
		CPU:    instancetypev1beta1.CPUInstancetype{Guest: cpus},
		Memory: instancetypev1beta1.MemoryInstancetype{Guest: resource.MustParse(memory)},
	}
}

func TestCapacityObjects(t *testing.T) {
	var got []schema.GroupVersionKind
	for _, obj := range CapacityObjects() {
		got = append(got, obj.GetObjectKind().GroupVersionKind())
	}
	want := []schema.GroupVersionKind{
		{Group: "kubevirt.io", Version: "v1", Kind: "VirtualMachineInstancePreset"},
		{Group: "instancetype.kubevirt.io", Version: "v1beta1", Kind: "VirtualMachineInstancetype"},
		{Group: "instancetype.kubevirt.io", Version: "v1beta1", Kind: "VirtualMachineClusterInstancetype"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
