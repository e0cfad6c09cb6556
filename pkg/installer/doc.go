// Package installer installs, upgrades and uninstalls the KubeVirt stack
// (CNI plugins, Multus, KubeVirt, CDI) with the Helm v3 SDK. It converges
// component by component in dependency order, applies CRDs itself, skips
// releases that would not change, waits for readiness after every step and
// uninstalls in the order that never deadlocks on finalizers: operator
// resources first, then operators, then (on request) CRDs.
//
// The sub-packages hold the pieces: components (catalog), images (pinned
// image table), helm (SDK actions), crds, readiness, status and preflight.
package installer
