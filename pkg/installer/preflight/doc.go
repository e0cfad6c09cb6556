// Package preflight finds what would block or degrade an installation before
// it starts: an unsupported Kubernetes version, no node that can run VMs with
// KVM when emulation is off, no default StorageClass for CDI, a KubeVirt or
// CDI (or a same-named Helm release) the installer did not install, and a
// shared namespace whose pod security level forbids a component's pods.
package preflight
