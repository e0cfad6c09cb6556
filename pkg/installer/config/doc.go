// Package config is the configuration of kubevirt-installer: the --config
// file (an InstallerConfiguration with chart values per component and the
// components to skip) and the overrides the command line layers on top of it.
package config
