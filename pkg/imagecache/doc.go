// Package imagecache holds the conventions shared by the KubeVirt cloud
// provider and the infra-controller for cached OS images: the names and
// labels of cache DataVolumes and the format of the per-namespace image
// list.
//
// The provider imports an HTTP primary-disk image once per (URL, storage
// class) into a cache DataVolume named by DataVolumeName and clones it for
// every VM; the infra-controller imports the named images of ConfigMap
// ConfigMapName and removes cache DataVolumes that no VM refers to.
package imagecache
