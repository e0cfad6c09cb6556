// Package upstream keeps the files this repository takes from KubeVirt's and
// CDI's own generators in step with them: the KubeVirt and CDI CRDs the test
// control planes install (test/crds), the CRDs of the kubevirt and cdi
// charts, and their operators' RBAC (charts/*/files/rbac). The generators run
// as binaries built from the tool modules in this directory (kubevirt/ pins
// KubeVirt v1.9.0, cdi/ pins CDI v1.65.0; see docs/development.md), because
// neither upstream module builds together with this module's dependencies.
//
// go test ./test/upstream -update rewrites the files; without -update the
// tests fail on any difference. Nothing outside of tests imports this
// package.
package upstream
