package vm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestAccessMode(t *testing.T) {
	facts := Facts{AccessModes: map[string]corev1.PersistentVolumeAccessMode{"shared": corev1.ReadWriteMany}}
	tests := []struct {
		name string
		disk config.DiskSettings
		want corev1.PersistentVolumeAccessMode
	}{
		{name: "explicit wins", disk: config.DiskSettings{StorageClassName: "shared", AccessMode: corev1.ReadWriteOnce}, want: corev1.ReadWriteOnce},
		{name: "storage profile", disk: config.DiskSettings{StorageClassName: "shared"}, want: corev1.ReadWriteMany},
		{name: "fallback", disk: config.DiskSettings{StorageClassName: "unknown"}, want: corev1.ReadWriteOnce},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := accessMode(tc.disk, facts); got != tc.want {
				t.Errorf("accessMode() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestImageSource(t *testing.T) {
	facts := Facts{Namespace: "cluster-a", ExtraHeaders: []string{"X-B: 2", "X-A: 1"}}
	tests := []struct {
		name    string
		src     config.ImageSource
		want    *cdicorev1beta1.DataVolumeSource
		wantErr bool
	}{
		{
			name: "http with inline headers and secret",
			src:  config.ImageSource{Kind: config.ImageSourceHTTP, URL: "https://x/img", ExtraHeaders: []string{"X-Z: 9", "X-Y: 8"}, SecretRef: "creds"},
			want: &cdicorev1beta1.DataVolumeSource{HTTP: &cdicorev1beta1.DataVolumeSourceHTTP{
				URL: "https://x/img", ExtraHeaders: []string{"X-Z: 9", "X-Y: 8"}, SecretRef: "creds",
			}},
		},
		{
			name: "http with headers from a secret, sorted",
			src:  config.ImageSource{Kind: config.ImageSourceHTTP, URL: "https://x/img", ExtraHeadersSecretRef: "headers"},
			want: &cdicorev1beta1.DataVolumeSource{HTTP: &cdicorev1beta1.DataVolumeSourceHTTP{
				URL: "https://x/img", ExtraHeaders: []string{"X-A: 1", "X-B: 2"},
			}},
		},
		{
			name: "registry defaults to node pull",
			src:  config.ImageSource{Kind: config.ImageSourceRegistry, URL: "docker://quay.io/img:1"},
			want: &cdicorev1beta1.DataVolumeSource{Registry: &cdicorev1beta1.DataVolumeSourceRegistry{
				URL: ptr.To("docker://quay.io/img:1"), PullMethod: ptr.To(cdicorev1beta1.RegistryPullNode),
			}},
		},
		{
			name: "registry pod pull",
			src:  config.ImageSource{Kind: config.ImageSourceRegistry, URL: "docker://quay.io/img:1", PullMethod: "pod"},
			want: &cdicorev1beta1.DataVolumeSource{Registry: &cdicorev1beta1.DataVolumeSourceRegistry{
				URL: ptr.To("docker://quay.io/img:1"), PullMethod: ptr.To(cdicorev1beta1.RegistryPullPod),
			}},
		},
		{
			name: "pvc in the VM namespace",
			src:  config.ImageSource{Kind: config.ImageSourcePVC, PVCName: "golden"},
			want: &cdicorev1beta1.DataVolumeSource{PVC: &cdicorev1beta1.DataVolumeSourcePVC{Namespace: "cluster-a", Name: "golden"}},
		},
		{
			name: "pvc in another namespace",
			src:  config.ImageSource{Kind: config.ImageSourcePVC, PVCNamespace: "images", PVCName: "golden"},
			want: &cdicorev1beta1.DataVolumeSource{PVC: &cdicorev1beta1.DataVolumeSourcePVC{Namespace: "images", Name: "golden"}},
		},
		{
			name:    "unknown kind",
			src:     config.ImageSource{Kind: "s3", URL: "s3://x"},
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := imageSource(tc.src, facts)
			if (err != nil) != tc.wantErr {
				t.Fatalf("imageSource() error = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("imageSource() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildDisks(t *testing.T) {
	in := testInput()
	in.Settings.PrimaryDisk.Tuning = config.DiskTuningSettings{Cache: kubevirtcorev1.CacheWriteThrough, DedicatedIOThread: ptr.To(true)}
	in.Settings.SecondaryDisks = []config.SecondaryDiskSettings{
		{Name: "data", DiskSettings: config.DiskSettings{Size: resource.MustParse("5Gi"), Tuning: config.DiskTuningSettings{Bus: "sata"}}},
	}

	disks, volumes := buildDisks(in)

	virtio := &kubevirtcorev1.DiskTarget{Bus: kubevirtcorev1.DiskBusVirtio}
	wantDisks := []kubevirtcorev1.Disk{
		{Name: "datavolumedisk", DiskDevice: kubevirtcorev1.DiskDevice{Disk: virtio}, Cache: kubevirtcorev1.CacheWriteThrough, DedicatedIOThread: ptr.To(true)},
		{Name: "cloudinitdisk", DiskDevice: kubevirtcorev1.DiskDevice{Disk: virtio}},
		{Name: "data", DiskDevice: kubevirtcorev1.DiskDevice{Disk: &kubevirtcorev1.DiskTarget{Bus: "sata"}}},
	}
	if diff := cmp.Diff(wantDisks, disks); diff != "" {
		t.Errorf("disks mismatch (-want +got):\n%s", diff)
	}
	wantVolumes := []kubevirtcorev1.Volume{
		{Name: "datavolumedisk", VolumeSource: kubevirtcorev1.VolumeSource{DataVolume: &kubevirtcorev1.DataVolumeSource{Name: "worker-1"}}},
		{Name: "cloudinitdisk", VolumeSource: kubevirtcorev1.VolumeSource{CloudInitNoCloud: &kubevirtcorev1.CloudInitNoCloudSource{
			UserDataSecretRef: &corev1.LocalObjectReference{Name: "userdata-worker-1"},
		}}},
		{Name: "data", VolumeSource: kubevirtcorev1.VolumeSource{DataVolume: &kubevirtcorev1.DataVolumeSource{Name: "worker-1-data"}}},
	}
	if diff := cmp.Diff(wantVolumes, volumes); diff != "" {
		t.Errorf("volumes mismatch (-want +got):\n%s", diff)
	}
}

func TestDataVolumeTemplates(t *testing.T) {
	in := testInput()
	in.Settings.PrimaryDisk.StorageTarget = config.StorageTargetPVC
	in.Settings.SecondaryDisks = []config.SecondaryDiskSettings{
		{Name: "data", DiskSettings: config.DiskSettings{Size: resource.MustParse("5Gi"), StorageClassName: "shared"}},
	}
	in.Facts.AccessModes = map[string]corev1.PersistentVolumeAccessMode{"shared": corev1.ReadWriteMany}
	in.Machine.Annotations = map[string]string{
		"cdi.kubevirt.io/storage.bind.immediate.requested": "true",
		"example.com/x": "y",
	}

	got, err := dataVolumeTemplates(in)
	if err != nil {
		t.Fatalf("dataVolumeTemplates() error = %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d DataVolumeTemplates, want 2", len(got))
	}

	root, data := got[0], got[1]
	if diff := cmp.Diff(map[string]string{"cdi.kubevirt.io/storage.bind.immediate.requested": "true"}, root.Annotations); diff != "" {
		t.Errorf("root annotations mismatch (-want +got):\n%s", diff)
	}
	if root.Name != "worker-1" || data.Name != "worker-1-data" {
		t.Errorf("names = %q, %q, want worker-1, worker-1-data", root.Name, data.Name)
	}
	if data.Annotations != nil {
		t.Errorf("secondary annotations = %v, want none", data.Annotations)
	}
	if data.Spec.Source == nil || data.Spec.Source.Blank == nil || data.Spec.Source.HTTP != nil {
		t.Errorf("secondary source = %+v, want blank only", data.Spec.Source)
	}
	for _, dv := range got {
		if dv.Spec.PVC == nil || dv.Spec.Storage != nil {
			t.Fatalf("%s: want spec.pvc only, got pvc=%v storage=%v", dv.Name, dv.Spec.PVC, dv.Spec.Storage)
		}
	}
	wantData := &corev1.PersistentVolumeClaimSpec{
		StorageClassName: ptr.To("shared"),
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}},
	}
	if diff := cmp.Diff(wantData, data.Spec.PVC); diff != "" {
		t.Errorf("secondary pvc mismatch (-want +got):\n%s", diff)
	}
	if got := root.Spec.PVC.AccessModes; len(got) != 1 || got[0] != corev1.ReadWriteOnce {
		t.Errorf("root access modes = %v, want [ReadWriteOnce]", got)
	}
}
