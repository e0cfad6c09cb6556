// Package mirror copies the installer's images into a private registry and
// relocates image references to it.
//
// Relocation keeps an image's repository path and tag and replaces its
// registry host with the private registry (which may carry a path prefix):
// quay.io/kubevirt/virt-api:v1.9.0 relocated to reg.local:5000/mirror
// becomes reg.local:5000/mirror/kubevirt/virt-api:v1.9.0. Because the
// KubeVirt and CDI operator charts pass every operand image through the
// operators' own environment variables, relocating the pinned image set is
// enough to move every image the installation runs, including the ones the
// operators deploy at run time; no admission webhook is involved.
//
// Copy pushes images concurrently (a bounded number at a time), retries
// transient registry errors and skips blobs the registry already has.
package mirror
