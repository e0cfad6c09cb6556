// Package vlan gives every TenantCluster a VLAN of its own: it claims a
// VLAN id of the operator's range per TenantCluster, one claim object (a
// Lease) per id so that the API server refuses a second claim of an id,
// records the id in the TenantCluster's status, writes the
// NetworkAttachmentDefinition on that VLAN into the tenant namespace from
// the operator's template, and releases the id once no VM of the deleted
// TenantCluster can use it any more.
package vlan
