// Package cloudprovider defines the contract between the machine controller
// and a cloud provider: the same method set as Kubermatic machine-controller's
// Provider interface (which cannot be imported from here), the Instance a
// provider reports, and the two errors the controller treats specially:
// ErrInstanceNotFound and TerminalError.
package cloudprovider
