// Package csicontroller runs the controller side of each tenant cluster's
// KubeVirt CSI driver on the infra cluster: in every live tenant namespace
// that holds both the tenant kubeconfig Secret and the CSI driver's infra
// kubeconfig Secret (kept by package csiaccess), it applies Deployment
// kubevirt-csi-controller (the manifests of the repository's
// addons/kubevirt-csi-controller directory) with server-side apply under
// field manager "infra-controller".
//
// The Deployment is watched, so a field of ours edited by hand, or the
// Deployment deleted, is taken back at once; the pods carry a hash of both
// kubeconfigs and restart when one changes. When the tenant kubeconfig
// Secret goes away, the Deployment is deleted; until the infra kubeconfig
// Secret exists, nothing is applied. Objects without the managed-by label
// of package tenant are never deleted.
//
// The tenant cluster thus never holds infra credentials: it runs only the
// node plugin (package addons of the infra-controller).
package csicontroller
