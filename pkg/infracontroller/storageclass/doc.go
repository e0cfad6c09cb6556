// Package storageclass initializes storage classes in tenant clusters: an
// infra StorageClass annotated kubevirt-initialization.k8c.io/initialize-sc
// = "true" becomes, in every tenant cluster, StorageClass kubevirt-<name>
// provisioned by the KubeVirt CSI driver (csi.kubevirt.io) with parameters
// infraStorageClassName and bus. The infra default class stays the default,
// and the zone and region terms of the infra class's allowedTopologies (or
// the zones annotation) become the tenant class's allowedTopologies.
// Removing the annotation deletes the tenant classes the controller made;
// tenant classes without its label are never touched. A tenant class
// allows volume expansion when its infra class does. With Options.Snapshots,
// an infra class that also names an infra VolumeSnapshotClass
// (SnapshotClassAnnotation) gets a tenant VolumeSnapshotClass of the same
// name (parameter infraSnapshotClassName); it is kept at each reconcile,
// not watched. Before writing those, the controller creates the
// snapshot.storage.k8s.io CRDs a tenant cluster lacks (SnapshotCRDs,
// checked once per tenant cluster); an existing CRD is never changed and
// no CRD is ever deleted.
//
// A tenant cluster is reached through a kubeconfig kept in a Secret in its
// tenant namespace on the infra cluster (tenant-kubeconfig, key kubeconfig,
// by default). Work is keyed by tenant namespace and triggered by changes of
// infra StorageClasses, of that Secret and of the Namespace, and by changes
// of the managed StorageClasses in the tenant cluster, which the controller
// watches (tenantconn.Watches), so hand edits and deletions there are undone
// within seconds. An optional periodic resync is a safety net on top.
package storageclass
