// Package charts embeds the Helm charts kubevirt-installer installs: one
// directory per chart (Chart.yaml, values.yaml, values.schema.json, crds/,
// templates/). The charts are plain Helm charts and also work with the helm
// command line.
package charts

import "embed"

// FS holds every chart directory of this package.
//
//go:embed all:cni-plugins all:multus all:kubevirt all:cdi all:machine-controller all:infra-controller
var FS embed.FS
