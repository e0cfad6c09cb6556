package machinedeployment

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// fakeCapacity is a CapacityProvider whose answer the test sets.
type fakeCapacity struct {
	capacity cloudprovider.NodeCapacity
	err      error
}

func (f *fakeCapacity) TemplateCapacity(context.Context, clusterv1alpha1.MachineSpec) (cloudprovider.NodeCapacity, error) {
	return f.capacity, f.err
}

func (f *fakeCapacity) CapacityObjects() []ctrlruntimeclient.Object { return nil }

func TestCapacityAnnotations(t *testing.T) {
	md := testDeployment(0, `{}`, 1, 0)
	md.Annotations = map[string]string{annotationMaxPods: "64"}
	md.Spec.Template.Spec.Labels = map[string]string{"pool": "gpu", "topology.kubernetes.io/zone": "from-template"}
	md.Spec.Template.Spec.Taints = []corev1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: "example.com/maintenance", Effect: corev1.TaintEffectNoExecute},
	}
	c := cloudprovider.NodeCapacity{
		CPU: resource.NewQuantity(4, resource.DecimalSI), Memory: ptr.To(resource.MustParse("16Gi")),
		EphemeralStorage: ptr.To(resource.MustParse("40Gi")), GPUType: "nvidia.com/gpu", GPUCount: 2,
		Labels: map[string]string{"topology.kubernetes.io/zone": "from-provider", "topology.kubernetes.io/region": "eu"},
	}
	want := map[string]string{
		AnnotationCapacityCPU:           "4",
		AnnotationCapacityMemory:        "16Gi",
		AnnotationCapacityEphemeralDisk: "40Gi",
		AnnotationCapacityGPUType:       "nvidia.com/gpu",
		AnnotationCapacityGPUCount:      "2",
		AnnotationCapacityMaxPods:       "64",
		AnnotationCapacityLabels:        "pool=gpu,topology.kubernetes.io/region=eu,topology.kubernetes.io/zone=from-template",
		AnnotationCapacityTaints:        "dedicated=gpu:NoSchedule,example.com/maintenance:NoExecute",
	}
	if diff := cmp.Diff(want, capacityAnnotations(md, c)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	bare := testDeployment(0, `{}`, 1, 0)
	bare.Annotations = map[string]string{annotationMaxPods: "many"}
	want = map[string]string{AnnotationCapacityMaxPods: "110"}
	if diff := cmp.Diff(want, capacityAnnotations(bare, cloudprovider.NodeCapacity{GPUType: "nvidia.com/gpu"})); diff != "" {
		t.Errorf("without capacity, an invalid maxPods and GPUs (-want +got):\n%s", diff)
	}
}

func TestApplyCapacity(t *testing.T) {
	cpu, memory := AnnotationCapacityCPU, AnnotationCapacityMemory
	for _, tc := range []struct {
		name              string
		annotations, want map[string]string
		desired           map[string]string
	}{
		{
			name:        "fresh",
			annotations: map[string]string{"other": "x"},
			desired:     map[string]string{cpu: "2", memory: "4Gi"},
			want: map[string]string{"other": "x", cpu: "2", memory: "4Gi",
				AnnotationCapacityManaged: `{"capacity.cluster-autoscaler.kubernetes.io/cpu":"2","capacity.cluster-autoscaler.kubernetes.io/memory":"4Gi"}`},
		},
		{
			name:        "a value set by hand before is kept",
			annotations: map[string]string{cpu: "8"},
			desired:     map[string]string{cpu: "2", memory: "4Gi"},
			want:        map[string]string{cpu: "8", memory: "4Gi", AnnotationCapacityManaged: `{"capacity.cluster-autoscaler.kubernetes.io/memory":"4Gi"}`},
		},
		{
			name:        "an empty value set by hand is kept",
			annotations: map[string]string{cpu: ""},
			desired:     map[string]string{cpu: "2"},
			want:        map[string]string{cpu: ""},
		},
		{
			name: "the controller's value follows the capacity",
			annotations: map[string]string{cpu: "2", memory: "4Gi",
				AnnotationCapacityManaged: `{"capacity.cluster-autoscaler.kubernetes.io/cpu":"2","capacity.cluster-autoscaler.kubernetes.io/memory":"4Gi"}`},
			desired: map[string]string{cpu: "4"},
			want:    map[string]string{cpu: "4", AnnotationCapacityManaged: `{"capacity.cluster-autoscaler.kubernetes.io/cpu":"4"}`},
		},
		{
			name: "the controller's value changed by hand becomes the user's",
			annotations: map[string]string{cpu: "16", memory: "4Gi",
				AnnotationCapacityManaged: `{"capacity.cluster-autoscaler.kubernetes.io/cpu":"2","capacity.cluster-autoscaler.kubernetes.io/memory":"4Gi"}`},
			desired: map[string]string{cpu: "4", memory: "8Gi"},
			want:    map[string]string{cpu: "16", memory: "8Gi", AnnotationCapacityManaged: `{"capacity.cluster-autoscaler.kubernetes.io/memory":"8Gi"}`},
		},
		{
			name:        "the controller's value deleted by hand comes back",
			annotations: map[string]string{AnnotationCapacityManaged: `{"capacity.cluster-autoscaler.kubernetes.io/cpu":"2"}`},
			desired:     map[string]string{cpu: "2"},
			want:        map[string]string{cpu: "2", AnnotationCapacityManaged: `{"capacity.cluster-autoscaler.kubernetes.io/cpu":"2"}`},
		},
		{
			name:        "a record that does not parse claims nothing",
			annotations: map[string]string{cpu: "2", AnnotationCapacityManaged: `not json`},
			desired:     map[string]string{cpu: "4"},
			want:        map[string]string{cpu: "2"},
		},
		{
			name:        "nothing wanted removes the record",
			annotations: map[string]string{cpu: "2", AnnotationCapacityManaged: `{"capacity.cluster-autoscaler.kubernetes.io/cpu":"2"}`},
			want:        map[string]string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			applyCapacity(tc.annotations, tc.desired)
			if diff := cmp.Diff(tc.want, tc.annotations); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestReconcileKeepsCapacity: a MachineDeployment at 0 replicas gets the
// capacity annotations; a value set by hand stays; a new capacity updates
// the controller's values; a capacity that cannot be read changes nothing.
func TestReconcileKeepsCapacity(t *testing.T) {
	md := testDeployment(0, `{"image":"a"}`, 1, 0)
	md.Annotations = map[string]string{AnnotationCapacityMemory: "1Gi"}
	c := newTestClient(t, md)
	r := newReconciler(c, events.NewFakeRecorder(100))
	provider := &fakeCapacity{capacity: cloudprovider.NodeCapacity{
		CPU: resource.NewQuantity(2, resource.DecimalSI), Memory: ptr.To(resource.MustParse("4Gi")),
	}}
	r.capacity = provider
	annotations := func() map[string]string {
		t.Helper()
		got := map[string]string{}
		for _, key := range capacityKeys {
			if v, ok := getDeployment(t, c).Annotations[key]; ok {
				got[key] = v
			}
		}
		return got
	}
	reconcileOnce(t, r)
	settle(t, c, true)
	reconcileOnce(t, r)
	want := map[string]string{AnnotationCapacityCPU: "2", AnnotationCapacityMemory: "1Gi", AnnotationCapacityMaxPods: "110"}
	if diff := cmp.Diff(want, annotations()); diff != "" {
		t.Errorf("first reconcile (-want +got):\n%s", diff)
	}

	provider.capacity.CPU = resource.NewQuantity(8, resource.DecimalSI)
	reconcileOnce(t, r)
	want[AnnotationCapacityCPU] = "8"
	if diff := cmp.Diff(want, annotations()); diff != "" {
		t.Errorf("after the capacity changed (-want +got):\n%s", diff)
	}

	provider.err = errors.New("infra cluster unreachable")
	provider.capacity = cloudprovider.NodeCapacity{}
	reconcileOnce(t, r)
	if diff := cmp.Diff(want, annotations()); diff != "" {
		t.Errorf("with the capacity unreadable (-want +got):\n%s", diff)
	}
}
