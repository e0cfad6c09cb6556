// Package networks turns the CNI configurations listed in ConfigMap
// tenant-networks of a tenant namespace into Multus
// NetworkAttachmentDefinitions in that namespace, keeps them up to date and
// deletes the ones whose entry is gone. NetworkAttachmentDefinitions it did
// not create, including shared networks in other namespaces, are never
// modified.
package networks
