package vm

import (
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"
)

// CacheDataVolume returns the cache DataVolume that imports the primary
// disk's http image once for the namespace, or nil when the primary disk
// is not PreAllocated. It requests the primary disk's storage class, size
// and access mode; its name depends only on the URL and the storage class.
func CacheDataVolume(in Input) (*cdicorev1beta1.DataVolume, error) {
	d := in.Settings.PrimaryDisk
	if !d.PreAllocated {
		return nil, nil
	}
	source, err := imageSource(d.Source, in.Facts)
	if err != nil {
		return nil, err
	}
	return &cdicorev1beta1.DataVolume{
		TypeMeta: metav1.TypeMeta{APIVersion: cdicorev1beta1.SchemeGroupVersion.String(), Kind: "DataVolume"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: in.Facts.Namespace,
			Name:      imagecache.DataVolumeName(d.Source.URL, d.StorageClassName),
			Labels:    map[string]string{imagecache.Label: imagecache.KindHTTP},
			Annotations: map[string]string{
				imagecache.URLAnnotation:           d.Source.URL,
				imagecache.SizeAnnotation:          d.Size.String(),
				imagecache.BindImmediateAnnotation: "true",
			},
		},
		Spec: dataVolumeSpec(source, d.StorageTarget, d.DiskSettings, in.Facts),
	}, nil
}
