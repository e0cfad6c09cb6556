package imagecache

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

var (
	// DataVolumeGVK is CDI's DataVolume.
	DataVolumeGVK = schema.GroupVersionKind{Group: "cdi.kubevirt.io", Version: "v1beta1", Kind: "DataVolume"}
	// VirtualMachineGVK is KubeVirt's VirtualMachine.
	VirtualMachineGVK = schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "VirtualMachine"}
)

// newObject returns an empty unstructured object of gvk.
func newObject(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// newList returns an empty unstructured list of gvk.
func newList(gvk schema.GroupVersionKind) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return l
}

// namedDataVolume returns the DataVolume of a named image. It asks for
// ReadWriteOnce: CDI refuses a DataVolume without access modes whose
// storage class's StorageProfile advertises none (any provisioner CDI does
// not know), and VMs only clone the volume, which one node reading it
// serves.
func namedDataVolume(namespace string, img imagecache.Image) *unstructured.Unstructured {
	storage := map[string]any{
		"accessModes": []any{string(corev1.ReadWriteOnce)},
		"resources":   map[string]any{"requests": map[string]any{"storage": img.Size.String()}},
	}
	if img.StorageClassName != "" {
		storage["storageClassName"] = img.StorageClassName
	}
	u := newObject(DataVolumeGVK)
	u.SetNamespace(namespace)
	u.SetName(imagecache.NamedDataVolumeName(img.Name))
	u.SetLabels(map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue, imagecache.Label: imagecache.KindNamed})
	u.SetAnnotations(map[string]string{imagecache.URLAnnotation: img.URL, imagecache.BindImmediateAnnotation: "true"})
	u.Object["spec"] = map[string]any{
		"source":  map[string]any{"http": map[string]any{"url": img.URL}},
		"storage": storage,
	}
	return u
}

// sameImage reports whether the DataVolume have imports what want does:
// the same URL, storage class and size. DataVolume specs are immutable, so
// a difference means re-creating it.
func sameImage(have, want *unstructured.Unstructured) bool {
	for _, path := range [][]string{
		{"spec", "source", "http", "url"},
		{"spec", "storage", "storageClassName"},
	} {
		h, _, _ := unstructured.NestedString(have.Object, path...)
		w, _, _ := unstructured.NestedString(want.Object, path...)
		if h != w {
			return false
		}
	}
	path := []string{"spec", "storage", "resources", "requests", "storage"}
	h, _, _ := unstructured.NestedString(have.Object, path...)
	w, _, _ := unstructured.NestedString(want.Object, path...)
	hq, err1 := resource.ParseQuantity(h)
	wq, err2 := resource.ParseQuantity(w)
	return err1 == nil && err2 == nil && hq.Cmp(wq) == 0
}

// references returns the names of the PVCs and DataVolumes in namespace
// that the VirtualMachine vm clones from or mounts.
func references(vm *unstructured.Unstructured, namespace string) []string {
	var out []string
	templates, _, _ := unstructured.NestedSlice(vm.Object, "spec", "dataVolumeTemplates")
	for _, t := range templates {
		m, ok := t.(map[string]any)
		if !ok {
			continue
		}
		name, _, _ := unstructured.NestedString(m, "spec", "source", "pvc", "name")
		ns, _, _ := unstructured.NestedString(m, "spec", "source", "pvc", "namespace")
		if name != "" && (ns == "" || ns == namespace) {
			out = append(out, name)
		}
	}
	volumes, _, _ := unstructured.NestedSlice(vm.Object, "spec", "template", "spec", "volumes")
	for _, v := range volumes {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		for _, path := range [][]string{{"dataVolume", "name"}, {"persistentVolumeClaim", "claimName"}} {
			if name, _, _ := unstructured.NestedString(m, path...); name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}
