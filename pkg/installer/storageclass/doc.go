// Package storageclass is the infra admin's workflow for making infra
// StorageClasses usable from tenant clusters: it sets, removes and lists the
// annotation kubevirt-initialization.k8c.io/initialize-sc that the
// infra-controller (and Kubermatic) read to create matching tenant classes.
package storageclass
