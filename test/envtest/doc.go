// Package envtest is a test component: it starts a real Kubernetes control
// plane (etcd and kube-apiserver through controller-runtime's envtest, and
// optionally kube-controller-manager beside it so owner-reference garbage
// collection and namespace deletion really happen) with the CRDs of
// test/crds installed, for the integration tests of this module.
//
// On request it makes the control plane a KubeVirt and CDI infra cluster as
// far as their own code runs without nodes (WithKubeVirt: virt-api's
// admission; WithVirtController; WithCDIController), playing their operators.
//
// The control-plane binaries come from KUBEBUILDER_ASSETS when it is set;
// otherwise hack/envtest-binaries.sh builds (or finds) them and prints their
// directory. KubeVirt's and CDI's binaries likewise come from
// UPSTREAM_BINARIES or hack/upstream-binaries.sh.
// Setting SKIP_ENVTEST=true makes Start skip the calling test.
//
// Nothing outside of tests may import this package.
package envtest
