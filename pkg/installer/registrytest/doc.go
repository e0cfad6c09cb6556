// Package registrytest serves real OCI registries in-process for tests and
// benchmarks of the offline bundle: go-containerregistry's registry on an
// httptest server at 127.0.0.1, with request counters, injectable transient
// failures and a generator of random images that share a base layer.
//
// The installer's pinned images live on quay.io, docker.io and ghcr.io.
// Upstream serves all of them from one in-process registry under a path per
// upstream host (quay.io/kubevirt/virt-api:v1.9.0 is at
// 127.0.0.1:PORT/quay.io/kubevirt/virt-api:v1.9.0); Registry.Mirrors is the
// mirror.Mirrors that points the pinned references there, the same
// mechanism as the --pull-mirror flag.
package registrytest
