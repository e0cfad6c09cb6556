// Package envtest is a test component: it starts a real Kubernetes control
// plane (etcd and kube-apiserver through controller-runtime's envtest, and
// optionally kube-controller-manager beside it so owner-reference garbage
// collection and namespace deletion really happen) with the CRDs of
// test/crds installed, for the integration tests of this module.
//
// The binaries come from KUBEBUILDER_ASSETS when it is set; otherwise
// hack/envtest-binaries.sh builds (or finds) them and prints their directory.
// Setting SKIP_ENVTEST=true makes Start skip the calling test.
//
// Nothing outside of tests may import this package.
package envtest
