// Package flavors keeps the VM flavors of every tenant namespace on the
// infra cluster in sync: the VirtualMachineInstancePresets of a source
// namespace ("default") plus the built-in kubermatic-standard preset, the
// standard VirtualMachineInstancetypes standard-2, standard-4 and standard-8
// and the VirtualMachinePreference sockets-advantage
// (instancetype.kubevirt.io/v1beta1).
//
// The work is watch-driven and keyed by tenant namespace: a change of a
// source preset enqueues every tenant namespace, a change in a tenant
// namespace enqueues that namespace. A reconcile compares labels and spec of
// what should be there with what the cache holds and writes only what
// differs, so a resync with nothing changed issues no request at all. Every
// object the controller creates carries the label
// kkp-kubevirt.io/managed-by=infra-controller; objects without it are never
// updated or deleted, and copies with it that are no longer wanted (deleted
// from the source namespace, or their set switched off) are deleted.
package flavors
