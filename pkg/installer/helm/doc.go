// Package helm runs Helm v3 SDK actions (install, upgrade, uninstall and
// client-side rendering) for kubevirt-installer against a cluster given as a
// rest.Config, with no helm binary. CRDs are left out of every action: the
// installer applies them itself, so they are upgraded too, which Helm's crds/
// rule never does.
package helm
