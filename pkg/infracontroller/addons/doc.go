// Package addons applies the manifests of the repository's addons/
// directory (the tenant-cluster side of the KubeVirt CSI driver) to every
// tenant cluster whose kubeconfig Secret is in its tenant namespace, with
// server-side apply under field manager "infra-controller". Applying
// unchanged manifests writes nothing; a field edited by hand is taken back
// at the next reconcile (the Secrets' events, or the resync interval, since
// tenant clusters are not watched).
package addons
