// Package importer is a test component standing in for CDI's importer: it
// really downloads the HTTP source of every DataVolume (standalone, or a
// DataVolumeTemplate of a VirtualMachine, which no KubeVirt controller
// turns into a DataVolume in tests) and counts the bytes, so tests can
// show how many imports an infra namespace causes. Clones (pvc sources)
// cost no download. It is not used outside tests.
package importer
