// Package vm builds, as a pure and deterministic function, the KubeVirt
// VirtualMachine (with its DataVolumeTemplates) and the cloud-init Secret of
// one Machine from resolved Settings, the Machine's identity and the facts
// the provider looked up on the infra cluster. Nothing here does I/O.
package vm
