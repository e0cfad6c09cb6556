// Package infracontroller assembles the infra-controller: the controllers
// that run against a KubeVirt infra cluster and prepare every tenant
// namespace (cluster-<id>) for the KubeVirt cloud provider.
//
// Each concern lives in its own package: tenant recognises tenant
// namespaces, flavors keeps presets, instancetypes and preferences in sync,
// and storageclass initializes storage classes in tenant clusters. Setup
// registers them with a controller-runtime manager whose cache was built
// with CacheOptions. See docs/infra-controller.md.
package infracontroller
