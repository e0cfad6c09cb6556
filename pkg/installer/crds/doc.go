// Package crds installs, upgrades and removes the CustomResourceDefinitions
// of the charts. Helm installs a chart's crds/ only once and never upgrades or
// deletes them; the installer applies them with server-side apply before every
// install and upgrade and deletes them only when asked to.
package crds
