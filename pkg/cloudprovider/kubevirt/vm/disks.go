package vm

import (
	"fmt"
	"slices"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// SecondaryDataVolumeName returns the name of the DataVolume of a secondary
// disk.
func SecondaryDataVolumeName(vmName, diskName string) string {
	return vmName + "-" + diskName
}

// buildDisks returns the disks of the VM template and their volumes: the
// root disk, the cloud-init disk, then the secondary disks in order.
func buildDisks(in Input) ([]kubevirtcorev1.Disk, []kubevirtcorev1.Volume) {
	s := in.Settings
	disks := []kubevirtcorev1.Disk{
		disk(RootDiskName, s.PrimaryDisk.Tuning),
		disk(CloudInitDiskName, config.DiskTuningSettings{}),
	}
	volumes := []kubevirtcorev1.Volume{
		dataVolumeVolume(RootDiskName, in.Machine.Name),
		{
			Name: CloudInitDiskName,
			VolumeSource: kubevirtcorev1.VolumeSource{
				CloudInitNoCloud: &kubevirtcorev1.CloudInitNoCloudSource{
					UserDataSecretRef: &corev1.LocalObjectReference{Name: UserDataSecretName(in.Machine.Name)},
				},
			},
		},
	}
	for _, d := range s.SecondaryDisks {
		disks = append(disks, disk(d.Name, d.Tuning))
		volumes = append(volumes, dataVolumeVolume(d.Name, SecondaryDataVolumeName(in.Machine.Name, d.Name)))
	}
	return disks, volumes
}

// disk returns a disk with its tuning applied; the bus defaults to virtio.
func disk(name string, t config.DiskTuningSettings) kubevirtcorev1.Disk {
	bus := t.Bus
	if bus == "" {
		bus = kubevirtcorev1.DiskBusVirtio
	}
	out := kubevirtcorev1.Disk{
		Name: name,
		DiskDevice: kubevirtcorev1.DiskDevice{
			Disk: &kubevirtcorev1.DiskTarget{Bus: bus},
		},
		Cache: t.Cache,
	}
	if t.DedicatedIOThread != nil {
		out.DedicatedIOThread = ptr.To(*t.DedicatedIOThread)
	}
	return out
}

// dataVolumeVolume returns a volume backed by a DataVolume.
func dataVolumeVolume(name, dataVolume string) kubevirtcorev1.Volume {
	return kubevirtcorev1.Volume{
		Name: name,
		VolumeSource: kubevirtcorev1.VolumeSource{
			DataVolume: &kubevirtcorev1.DataVolumeSource{Name: dataVolume},
		},
	}
}

// dataVolumeTemplates returns the DataVolumeTemplates of the VM: the root
// disk, imported from the OS image, then one blank DataVolume per secondary
// disk.
func dataVolumeTemplates(in Input) ([]kubevirtcorev1.DataVolumeTemplateSpec, error) {
	s := in.Settings
	source, err := imageSource(s.PrimaryDisk.Source, in.Facts)
	if err != nil {
		return nil, err
	}
	if in.Facts.CacheDataVolume != "" && s.PrimaryDisk.PreAllocated {
		source = &cdicorev1beta1.DataVolumeSource{
			PVC: &cdicorev1beta1.DataVolumeSourcePVC{Namespace: in.Facts.Namespace, Name: in.Facts.CacheDataVolume},
		}
	}
	target := s.PrimaryDisk.StorageTarget
	out := []kubevirtcorev1.DataVolumeTemplateSpec{{
		ObjectMeta: metav1.ObjectMeta{
			Name:        in.Machine.Name,
			Annotations: cdiAnnotations(in.Machine.Annotations),
		},
		Spec: dataVolumeSpec(source, target, s.PrimaryDisk.DiskSettings, in.Facts),
	}}
	for _, d := range s.SecondaryDisks {
		blank := &cdicorev1beta1.DataVolumeSource{Blank: &cdicorev1beta1.DataVolumeBlankImage{}}
		out = append(out, kubevirtcorev1.DataVolumeTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Name: SecondaryDataVolumeName(in.Machine.Name, d.Name)},
			Spec:       dataVolumeSpec(blank, target, d.DiskSettings, in.Facts),
		})
	}
	return out, nil
}

// dataVolumeSpec returns a DataVolume spec that requests the disk's storage
// through spec.pvc or, by default, spec.storage.
func dataVolumeSpec(source *cdicorev1beta1.DataVolumeSource, target config.StorageTarget, d config.DiskSettings, f Facts) cdicorev1beta1.DataVolumeSpec {
	var class *string
	if d.StorageClassName != "" {
		class = ptr.To(d.StorageClassName)
	}
	accessModes := []corev1.PersistentVolumeAccessMode{accessMode(d, f)}
	requests := corev1.VolumeResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceStorage: d.Size.DeepCopy()},
	}

	spec := cdicorev1beta1.DataVolumeSpec{Source: source}
	if target == config.StorageTargetPVC {
		spec.PVC = &corev1.PersistentVolumeClaimSpec{
			StorageClassName: class,
			AccessModes:      accessModes,
			Resources:        requests,
		}
		return spec
	}
	spec.Storage = &cdicorev1beta1.StorageSpec{
		StorageClassName: class,
		AccessModes:      accessModes,
		Resources:        requests,
	}
	return spec
}

// accessMode returns the disk's access mode, else the one the storage
// class's StorageProfile advertises, else ReadWriteOnce.
func accessMode(d config.DiskSettings, f Facts) corev1.PersistentVolumeAccessMode {
	if d.AccessMode != "" {
		return d.AccessMode
	}
	if mode := f.AccessModes[d.StorageClassName]; mode != "" {
		return mode
	}
	return corev1.ReadWriteOnce
}

// imageSource returns the CDI source of the OS image.
func imageSource(src config.ImageSource, f Facts) (*cdicorev1beta1.DataVolumeSource, error) {
	switch src.Kind {
	case config.ImageSourceRegistry:
		pullMethod := cdicorev1beta1.RegistryPullMethod(src.PullMethod)
		if pullMethod == "" {
			// Node pulls reuse the container runtime's cache and are faster.
			pullMethod = cdicorev1beta1.RegistryPullNode
		}
		return &cdicorev1beta1.DataVolumeSource{
			Registry: &cdicorev1beta1.DataVolumeSourceRegistry{
				URL:        ptr.To(src.URL),
				PullMethod: ptr.To(pullMethod),
			},
		}, nil
	case config.ImageSourcePVC:
		namespace, name := src.PVCNamespace, src.PVCName
		if namespace == "" {
			namespace = f.Namespace
		}
		if f.SourcePVC != "" {
			namespace, name = f.Namespace, f.SourcePVC
		}
		return &cdicorev1beta1.DataVolumeSource{
			PVC: &cdicorev1beta1.DataVolumeSourcePVC{Namespace: namespace, Name: name},
		}, nil
	case config.ImageSourceHTTP:
		headers := slices.Clone(src.ExtraHeaders)
		if src.ExtraHeadersSecretRef != "" {
			headers = slices.Sorted(slices.Values(f.ExtraHeaders))
		}
		return &cdicorev1beta1.DataVolumeSource{
			HTTP: &cdicorev1beta1.DataVolumeSourceHTTP{
				URL:          src.URL,
				ExtraHeaders: headers,
				SecretRef:    src.SecretRef,
			},
		}, nil
	default:
		return nil, fmt.Errorf("unknown image source kind %q", src.Kind)
	}
}
