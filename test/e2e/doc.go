// Package e2e holds the end-to-end tests of machine-controller: two envtest
// control planes (a user cluster and an infra cluster, each with the
// garbage collector of kube-controller-manager), the Machine and MachineSet
// controllers on the user cluster, the KubeVirt provider and the KubeVirt
// simulator on the infra cluster, which also registers the guests' Nodes in
// the user cluster. Set SKIP_ENVTEST=true to skip them.
package e2e
