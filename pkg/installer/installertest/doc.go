// Package installertest is a test component for the installer's integration
// tests. Its Simulator plays, against an envtest API server, what such a
// server lacks: the controllers and kubelets that roll Deployments and
// DaemonSets out, and virt-operator and cdi-operator, which report their
// resources Available at the version of their Deployment, hold them with a
// finalizer and release it only while they are running.
//
// Nothing outside of tests may import this package.
package installertest
