// Package images is the pinned image table of kubevirt-installer: for every
// component version it names each container image the installation runs,
// including the images an operator deploys at run time (virt-api,
// virt-handler, virt-launcher, cdi-importer, ...) that never appear as an
// image field of a chart. The table is the single source of the charts'
// images values and of the `images` command.
package images
