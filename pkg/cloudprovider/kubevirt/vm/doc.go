// Package vm builds, as a pure and deterministic function, the KubeVirt
// VirtualMachine (with its DataVolumeTemplates) and the cloud-init Secret of
// one Machine from resolved Settings, the Machine's identity and the facts
// the provider looked up on the infra cluster. Nothing here does I/O.
//
// The files follow the parts of the VM: build.go assembles it, labels.go
// owns labels and annotations, domain.go compute and devices, disks.go disks,
// volumes and DataVolumeTemplates, networks.go networks and interfaces, and
// scheduling.go affinity and topology spread.
//
// Tests come in two layers. Table tests cover each helper. Golden tests run
// every testdata/cases/<name>.yaml (a providerSpec.value, a Machine, facts
// and user data) through config.Load and Build and compare the result with
// testdata/golden/<name>.yaml (config warnings as comments, the VM, then the
// Secret). Regenerate the golden files with
//
//	go test ./pkg/cloudprovider/kubevirt/vm/ -update
//
// and review the diff like code.
package vm
