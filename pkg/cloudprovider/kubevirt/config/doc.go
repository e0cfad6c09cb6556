// Package config owns the KubeVirt cloudProviderSpec: its wire types (a strict
// superset of the machine-controller SDK's kubevirt.RawConfig, so every
// MachineDeployment Kubermatic writes today decodes unchanged), the conversion
// of the KKP <= 2.20 flat format, the resolution of ConfigVar indirections into
// plain Settings, and the validation of those Settings with errors that name
// the field path and what is allowed.
//
// Parse decodes providerSpec.value strictly; Resolve resolves, defaults and
// validates it; Load does both. Problems the user must fix are reported
// together in one *InvalidError; failures to read a referenced Secret or
// ConfigMap are ordinary errors, since retrying may help. docs/provider-spec.md
// is the user-facing reference of every field.
//
// Nothing in this package talks to the infra cluster; ConfigVar references are
// resolved through the small Resolver interface, which the caller backs with
// the user cluster's client.
package config
