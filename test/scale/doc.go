// Package scale measures the machine-controller at scale: a MachineDeployment
// goes from 0 to N replicas on two real control planes (user and infra
// cluster) with the KubeVirt/CDI simulator standing in for KubeVirt, CDI and
// the kubelets. The controller runs as its own process (the binary built from
// cmd/machine-controller), so its peak memory and its API requests, read from
// its own client-go metrics, are its alone. The same run measures a raw
// client that creates the same VMs, Secrets and Machines directly, as the
// baseline of the time ratio. See docs/benchmarks.md.
package scale
