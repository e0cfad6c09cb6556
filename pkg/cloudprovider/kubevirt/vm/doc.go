// Package vm builds, as a pure and deterministic function, the KubeVirt
// VirtualMachine (with its DataVolumeTemplates), the cloud-init Secret and
// the optional SSH Service of one Machine from resolved Settings, the Machine's identity and the facts
// the provider looked up on the infra cluster. Nothing here does I/O.
//
// The files follow the parts of the VM: build.go assembles it, labels.go
// owns labels and annotations, domain.go compute and devices, disks.go disks,
// volumes and DataVolumeTemplates, networks.go networks and interfaces, and
// scheduling.go affinity and topology spread, and sshservice.go the Service
// that exposes the VM's SSH port.
//
// Tests come in two layers. Table tests cover each helper. Golden tests run
// every testdata/cases/<name>.yaml (a providerSpec.value, a Machine, facts
// and user data) through config.Load and Build and compare the result with
// testdata/golden/<name>.yaml (config warnings as comments, the VM, the
// Secret, then the SSH Service when there is one). Regenerate the golden files with
//
//	go test ./pkg/cloudprovider/kubevirt/vm/ -update
//
// and review the diff like code.
package vm
