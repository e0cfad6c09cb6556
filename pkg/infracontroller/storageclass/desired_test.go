package storageclass

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/apply"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

func infraClass(name string, annotations map[string]string, topologies ...corev1.TopologySelectorTerm) storagev1.StorageClass {
	return storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name, Annotations: annotations},
		Provisioner:       "example.com/" + name,
		AllowedTopologies: topologies,
	}
}

func term(reqs ...corev1.TopologySelectorLabelRequirement) corev1.TopologySelectorTerm {
	return corev1.TopologySelectorTerm{MatchLabelExpressions: reqs}
}

func req(key string, values ...string) corev1.TopologySelectorLabelRequirement {
	return corev1.TopologySelectorLabelRequirement{Key: key, Values: values}
}

func TestDesired(t *testing.T) {
	on := map[string]string{InitializeAnnotation: "true"}
	now := metav1.Now()
	deleting := infraClass("deleting", on)
	deleting.DeletionTimestamp = &now
	for _, tc := range []struct {
		name  string
		infra []storagev1.StorageClass
		o     Options
		want  []storagev1.StorageClass
	}{
		{
			name: "only annotated classes that are not being deleted",
			infra: []storagev1.StorageClass{
				infraClass("a", on), infraClass("b", map[string]string{InitializeAnnotation: "false"}), infraClass("c", nil), deleting,
			},
			want: []storagev1.StorageClass{expected("a", "scsi", nil, nil)},
		},
		{
			name:  "the option sets the default bus and the annotation overrides it",
			infra: []storagev1.StorageClass{infraClass("a", on), infraClass("b", map[string]string{InitializeAnnotation: "true", BusAnnotation: "sata"})},
			o:     Options{Bus: "virtio"},
			want:  []storagev1.StorageClass{expected("a", "virtio", nil, nil), expected("b", "sata", nil, nil)},
		},
		{
			name:  "the default class stays default",
			infra: []storagev1.StorageClass{infraClass("a", map[string]string{InitializeAnnotation: "true", DefaultClassAnnotation: "true"})},
			want:  []storagev1.StorageClass{expected("a", "scsi", map[string]string{DefaultClassAnnotation: "true"}, nil)},
		},
		{
			name: "zone and region terms are kept, node terms dropped",
			infra: []storagev1.StorageClass{infraClass("a", on,
				term(req(corev1.LabelTopologyZone, "z1"), req(corev1.LabelHostname, "n1")),
				term(req(corev1.LabelHostname, "n2")),
				term(req(corev1.LabelTopologyRegion, "r1")))},
			want: []storagev1.StorageClass{expected("a", "scsi", nil, []corev1.TopologySelectorTerm{
				term(req(corev1.LabelTopologyZone, "z1")), term(req(corev1.LabelTopologyRegion, "r1")),
			})},
		},
		{
			name: "the zones annotation replaces the topology",
			infra: []storagev1.StorageClass{infraClass("a", map[string]string{InitializeAnnotation: "true", ZonesAnnotation: " z1,,z2 "},
				term(req(corev1.LabelTopologyZone, "z9")))},
			want: []storagev1.StorageClass{expected("a", "scsi", nil, []corev1.TopologySelectorTerm{term(req(corev1.LabelTopologyZone, "z1", "z2"))})},
		},
		{
			name:  "expansion follows the infra class",
			infra: []storagev1.StorageClass{expandable("a", on, true), expandable("b", on, false), infraClass("c", on)},
			want:  []storagev1.StorageClass{expectedExpandable("a"), expected("b", "scsi", nil, nil), expected("c", "scsi", nil, nil)},
		},
		{
			name:  "expansion switched off",
			infra: []storagev1.StorageClass{expandable("a", on, true)},
			o:     Options{DisableVolumeExpansion: true},
			want:  []storagev1.StorageClass{expected("a", "scsi", nil, nil)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Desired(tc.infra, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Desired (-want +got):\n%s", diff)
			}
		})
	}
}

func expected(name, bus string, annotations map[string]string, topologies []corev1.TopologySelectorTerm) storagev1.StorageClass {
	return storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "kubevirt-" + name,
			Labels:      map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue, InfraClassLabel: name},
			Annotations: annotations,
		},
		Provisioner:       Provisioner,
		Parameters:        map[string]string{"infraStorageClassName": name, "bus": bus},
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
		AllowedTopologies: topologies,
	}
}

func expandable(name string, annotations map[string]string, allow bool) storagev1.StorageClass {
	sc := infraClass(name, annotations)
	sc.AllowVolumeExpansion = ptr.To(allow)
	return sc
}

func expectedExpandable(name string) storagev1.StorageClass {
	sc := expected(name, "scsi", nil, nil)
	sc.AllowVolumeExpansion = ptr.To(true)
	return sc
}

func TestDesiredSnapshotClasses(t *testing.T) {
	named := map[string]string{InitializeAnnotation: "true", SnapshotClassAnnotation: "infra-snap"}
	defaultNamed := map[string]string{InitializeAnnotation: "true", SnapshotClassAnnotation: "infra-snap", DefaultClassAnnotation: "true"}
	for _, tc := range []struct {
		name  string
		infra []storagev1.StorageClass
		o     Options
		want  map[string]string // tenant class: infra snapshot class, "*" marking the default
	}{
		{"snapshots off", []storagev1.StorageClass{infraClass("a", named)}, Options{}, map[string]string{}},
		{"only classes that name one", []storagev1.StorageClass{infraClass("a", named), infraClass("b", map[string]string{InitializeAnnotation: "true"})},
			Options{Snapshots: true}, map[string]string{"kubevirt-a": "infra-snap"}},
		{"not initialized", []storagev1.StorageClass{infraClass("a", map[string]string{SnapshotClassAnnotation: "infra-snap"})},
			Options{Snapshots: true}, map[string]string{}},
		{"the default class's is the default", []storagev1.StorageClass{infraClass("a", defaultNamed)},
			Options{Snapshots: true}, map[string]string{"kubevirt-a": "infra-snap*"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := DesiredSnapshotClasses(tc.infra, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, obj := range objs {
				infraName, _, _ := unstructured.NestedString(obj.Object, "parameters", "infraSnapshotClassName")
				if obj.GetAnnotations()[snapshotDefaultAnnotation] == "true" {
					infraName += "*"
				}
				got[obj.GetName()] = infraName
				if driver, _, _ := unstructured.NestedString(obj.Object, "driver"); driver != Provisioner || !tenant.IsManaged(obj) {
					t.Errorf("%s: driver %q, labels %v", obj.GetName(), driver, obj.GetLabels())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("snapshot classes (-want +got):\n%s", diff)
			}
			if classes, _ := Desired(tc.infra, tc.o); len(classes) != len(tc.infra)-countUninitialized(tc.infra) {
				t.Errorf("Desired returned %d StorageClasses", len(classes))
			}
		})
	}
}

func countUninitialized(infra []storagev1.StorageClass) int {
	n := 0
	for _, sc := range infra {
		if sc.Annotations[InitializeAnnotation] != "true" {
			n++
		}
	}
	return n
}

// holds reports whether have, carrying the hash of want as written, holds
// want.
func holds(t *testing.T, have, want ctrlruntimeclient.Object) bool {
	t.Helper()
	desired, err := apply.Desired(want, nil)
	if err != nil {
		t.Fatal(err)
	}
	annotations := have.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[apply.HashAnnotation] = desired.GetAnnotations()[apply.HashAnnotation]
	have.SetAnnotations(annotations)
	got, err := apply.Holds(have, desired)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestSnapshotClassCompare(t *testing.T) {
	objs, err := DesiredSnapshotClasses([]storagev1.StorageClass{infraClass("a", map[string]string{
		InitializeAnnotation: "true", SnapshotClassAnnotation: "s", DefaultClassAnnotation: "true",
	})}, Options{Snapshots: true})
	if err != nil || len(objs) != 1 {
		t.Fatalf("%d objects, error %v", len(objs), err)
	}
	want := objs[0]
	for _, tc := range []struct {
		name   string
		change func(u *unstructured.Unstructured)
		differ bool
	}{
		{"identical", func(*unstructured.Unstructured) {}, false},
		{"foreign label", func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"x": "y", tenant.ManagedByLabel: tenant.ManagedByValue, InfraClassLabel: "a"})
		}, false},
		{"parameter", func(u *unstructured.Unstructured) {
			u.Object["parameters"] = map[string]any{"infraSnapshotClassName": "other"}
		}, true},
		{"deletion policy", func(u *unstructured.Unstructured) { u.Object["deletionPolicy"] = "Retain" }, true},
		{"default marker removed", func(u *unstructured.Unstructured) { u.SetAnnotations(nil) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := want.DeepCopy()
			tc.change(have)
			if got := !holds(t, have, want); got != tc.differ {
				t.Errorf("differs = %v, want %v", got, tc.differ)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	want := expected("a", "scsi", map[string]string{DefaultClassAnnotation: "true"}, nil)
	for _, tc := range []struct {
		name                   string
		change                 func(sc *storagev1.StorageClass)
		wantRecreate, wantEdit bool
	}{
		{name: "identical", change: func(*storagev1.StorageClass) {}},
		{name: "foreign labels and annotations are ignored", change: func(sc *storagev1.StorageClass) {
			sc.Labels["x"] = "y"
			sc.Annotations["x"] = "y"
		}},
		{name: "a parameter differs", change: func(sc *storagev1.StorageClass) { sc.Parameters["bus"] = "virtio" }, wantRecreate: true, wantEdit: true},
		{name: "the binding mode differs", change: func(sc *storagev1.StorageClass) {
			sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
		}, wantRecreate: true, wantEdit: true},
		{name: "the default marker was removed", change: func(sc *storagev1.StorageClass) {
			delete(sc.Annotations, DefaultClassAnnotation)
		}, wantEdit: true},
		{name: "our label was changed", change: func(sc *storagev1.StorageClass) { sc.Labels[InfraClassLabel] = "b" }, wantEdit: true},
		{name: "expansion was allowed by hand", change: func(sc *storagev1.StorageClass) { sc.AllowVolumeExpansion = ptr.To(true) }, wantEdit: true},
		{name: "unset, as earlier releases wrote it", change: func(sc *storagev1.StorageClass) { sc.AllowVolumeExpansion = nil }, wantEdit: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := written(&want)
			tc.change(have)
			if got := needsRecreate(have, &want); got != tc.wantRecreate {
				t.Errorf("needsRecreate = %v, want %v", got, tc.wantRecreate)
			}
			if got := !holds(t, have, written(&want)); got != tc.wantEdit {
				t.Errorf("differs = %v, want %v", got, tc.wantEdit)
			}
		})
	}
}

func TestStorageClassEnforcement(t *testing.T) {
	named := func(snapshotClass string) map[string]string {
		return map[string]string{InitializeAnnotation: "true", SnapshotClassAnnotation: snapshotClass}
	}
	got, err := StorageClassEnforcement([]storagev1.StorageClass{infraClass("a", map[string]string{InitializeAnnotation: "true"})})
	if err != nil || got != "" {
		t.Errorf("without a named snapshot class: %q, %v; want nothing", got, err)
	}
	got, err = StorageClassEnforcement([]storagev1.StorageClass{
		infraClass("z", named("z-snap")), infraClass("a", named(" a-snap ")), infraClass("b", nil), infraClass("c", map[string]string{SnapshotClassAnnotation: "c-snap"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `allowAll: true
allowDefault: false
storageSnapshotMapping:
- storageClasses:
  - a
  volumeSnapshotClasses:
  - a-snap
- storageClasses:
  - z
  volumeSnapshotClasses:
  - z-snap
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("enforcement (-want +got):\n%s", diff)
	}
}
