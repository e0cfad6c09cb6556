// Package components is the catalog of kubevirt-installer: the components it
// installs in dependency order (cni-plugins, multus, kubevirt, cdi,
// infra-controller, machine-controller), the pinned version of each, where
// each goes, the custom resource its operator reconciles, and the chart and
// images that belong to it.
package components
