package kubevirt

import (
	"strings"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestDefaultStorageClass: disks without storageClassName get the infra
// cluster's default StorageClass (the newest of several), and without one
// Validate names each such disk.
func TestDefaultStorageClass(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	spec := f.spec(t, `
cloudProviderSpec:
  virtualMachine:
    template:
      primaryDisk: {storageClassName: ""}
      secondaryDisks: [{size: 5Gi, storageAccessType: ReadWriteOnce}]
`)
	m := machine("worker-default-class", spec)
	err := f.provider.Validate(ctx, nil, m.Spec)
	terminal, ok := cloudprovider.IsTerminal(err)
	if !ok {
		t.Fatalf("Validate without a default class: got %v, want a terminal error", err)
	}
	for _, disk := range []string{"primaryDisk.storageClassName", "secondaryDisks[0].storageClassName"} {
		if !strings.Contains(terminal.Message, disk+": no StorageClass of the infra cluster is the default") {
			t.Errorf("the error does not name %s: %s", disk, terminal.Message)
		}
	}

	isDefault := map[string]string{annotationDefaultClass: "true"}
	classes := []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: f.namespace + "-old-default", Annotations: isDefault}, Provisioner: "example.com/csi"},
		{ObjectMeta: metav1.ObjectMeta{Name: f.namespace + "-not-default", Annotations: map[string]string{annotationDefaultClass: "false"}}, Provisioner: "example.com/csi"},
	}
	for _, sc := range classes {
		f.create(t, sc)
		t.Cleanup(func() { _ = f.env.Client.Delete(ctx, sc) })
	}
	// Creation timestamps have a resolution of one second.
	time.Sleep(1100 * time.Millisecond)
	newest := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: f.namespace + "-new-default",
		Annotations: map[string]string{annotationBetaDefaultClass: "true"}}, Provisioner: "example.com/csi"}
	f.create(t, newest)
	t.Cleanup(func() { _ = f.env.Client.Delete(ctx, newest) })
	f.waitForCache(t, newest, true)

	if err := f.provider.Validate(ctx, nil, m.Spec); err != nil {
		t.Fatalf("Validate with a default class: %v", err)
	}
	if _, err := f.provider.Create(ctx, nil, m, f.data, testUserData); err != nil {
		t.Fatalf("Create: %v", err)
	}
	v, _ := f.objects(t, m.Name)
	if len(v.Spec.DataVolumeTemplates) != 2 {
		t.Fatalf("VM has %d DataVolumeTemplates, want 2", len(v.Spec.DataVolumeTemplates))
	}
	for _, dv := range v.Spec.DataVolumeTemplates {
		if dv.Spec.Storage == nil || ptr.Deref(dv.Spec.Storage.StorageClassName, "") != newest.Name {
			t.Errorf("DataVolume %s: storage class %v, want the newest default %s", dv.Name, dv.Spec.Storage, newest.Name)
		}
	}
}
