# The Makefile is the project's contract: every target works on a fresh machine
# and installs or builds what it needs itself.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

GO ?= go
LOCALBIN ?= $(CURDIR)/bin
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT := $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
CONTROLLER_TOOLS_VERSION ?= v0.23.0
CONTROLLER_GEN := $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
# envtest binaries (kube-apiserver, etcd, kube-controller-manager) built from source, cached outside the repo.
ENVTEST_ASSETS = $(shell hack/envtest-binaries.sh)
# KubeVirt's and CDI's own code (test/upstream) built into binaries the tests
# run, cached outside the repo.
UPSTREAM_BINARIES = $(shell hack/upstream-binaries.sh)
TEST_TIMEOUT ?= 30m
FUZZTIME ?= 60s

.DEFAULT_GOAL := help

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: demo
# The demo runs as a built binary, not through go run: its exit status (0
# after a clean teardown on Ctrl-C) reaches make unchanged, and its signals
# are its own.
demo: ## Run the provider against a local control plane built from source: MachineDeployment in, VirtualMachine out.
	@hack/preflight.sh demo
	$(GO) build -o $(LOCALBIN)/kubevirt-demo ./cmd/kubevirt-demo
	$(LOCALBIN)/kubevirt-demo

.PHONY: demo-check
demo-check: ## Run the demo without waiting for a person: exit 0 once every VM runs and is cleaned up.
	@hack/preflight.sh demo
	$(GO) build -o $(LOCALBIN)/kubevirt-demo ./cmd/kubevirt-demo
	$(LOCALBIN)/kubevirt-demo -once

.PHONY: build
build: ## Build all binaries into bin/.
	$(GO) build -o $(LOCALBIN)/ ./cmd/...

.PHONY: envtest
envtest: ## Build (once) the kube-apiserver, etcd and kube-controller-manager used by tests.
	@hack/envtest-binaries.sh

.PHONY: upstream
upstream: ## Build (once) KubeVirt's and CDI's own code the tests run: admission webhooks, generators, virt-controller, cdi-controller.
	@hack/upstream-binaries.sh

.PHONY: test
test: ## Run every test against a real kube-apiserver + etcd and KubeVirt's and CDI's own code (built first if not cached).
	@hack/preflight.sh test
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" UPSTREAM_BINARIES="$(UPSTREAM_BINARIES)" $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

.PHONY: bench
bench: ## Run the benchmarks (API requests per provider call, builder throughput); see docs/benchmarks.md.
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" UPSTREAM_BINARIES="$(UPSTREAM_BINARIES)" $(GO) test -count=1 -run '^$$' -bench . -benchmem ./...

.PHONY: fuzz
fuzz: ## Fuzz every parser of user input for FUZZTIME each (providerSpec, image, network and NetworkPolicy ConfigMaps, CCM feature gates, VM patches, AdmissionReviews, kubeconfigs).
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./pkg/cloudprovider/kubevirt/config
	$(GO) test -run '^$$' -fuzz '^FuzzParseImages$$' -fuzztime $(FUZZTIME) ./pkg/imagecache
	$(GO) test -run '^$$' -fuzz '^FuzzParseNetworks$$' -fuzztime $(FUZZTIME) ./pkg/infracontroller/networks
	$(GO) test -run '^$$' -fuzz '^FuzzParseCustom$$' -fuzztime $(FUZZTIME) ./pkg/infracontroller/netpol
	$(GO) test -run '^$$' -fuzz '^FuzzParseFeatureGates$$' -fuzztime $(FUZZTIME) ./addons
	$(GO) test -run '^$$' -fuzz '^FuzzParsePatch$$' -fuzztime $(FUZZTIME) ./pkg/cloudprovider/kubevirt/vm
	$(GO) test -run '^$$' -fuzz '^FuzzAdmissionReview$$' -fuzztime $(FUZZTIME) ./pkg/webhook
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./pkg/kubeconfig

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate the controllers' RBAC into their charts from the +kubebuilder:rbac markers; generate the cluster.k8s.io CRDs from the SDK types; generate the TenantCluster deepcopy and CRD; take the KubeVirt and CDI CRDs and operator RBAC from their own generators; copy the snapshot.storage.k8s.io CRDs of external-snapshotter v8.2.0 (the csi-snapshotter image's version) into addons/kubevirt-csi-snapshot-crds.
	$(CONTROLLER_GEN) rbac:roleName=machine-controller paths=./pkg/controller output:rbac:dir=charts/machine-controller/files/rbac/user
	$(CONTROLLER_GEN) rbac:roleName=kubevirt-kkp-provider paths=./pkg/cloudprovider/kubevirt/infra output:rbac:dir=charts/machine-controller/files/rbac/infra
	$(CONTROLLER_GEN) rbac:roleName=machine-controller-webhook paths=./pkg/webhook output:rbac:dir=charts/machine-controller/files/rbac/webhook
	$(CONTROLLER_GEN) rbac:roleName=infra-controller paths=./pkg/infracontroller output:rbac:dir=charts/infra-controller/files/rbac
	hack/gen-cluster-crds.sh $(abspath $(CONTROLLER_GEN)) test/crds/cluster.k8s.io.yaml
	cp test/crds/cluster.k8s.io.yaml charts/machine-controller/crds/cluster.k8s.io.yaml
	$(CONTROLLER_GEN) object paths=./pkg/apis/...
	$(CONTROLLER_GEN) crd paths=./pkg/apis/... output:crd:dir=charts/infra-controller/crds
	cp charts/infra-controller/crds/infra.kkp-kubevirt.io_tenantclusters.yaml test/crds/infra.kkp-kubevirt.io.yaml
	d="$$($(GO) mod download -json github.com/kubernetes-csi/external-snapshotter/client/v8@v8.2.0 | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p')" && for f in volumesnapshotclasses volumesnapshotcontents volumesnapshots; do install -D -m 0644 "$$d/config/crd/snapshot.storage.k8s.io_$$f.yaml" "addons/kubevirt-csi-snapshot-crds/snapshot.storage.k8s.io_$$f.yaml"; done
	UPSTREAM_BINARIES="$(UPSTREAM_BINARIES)" $(GO) test -count=1 ./test/upstream -update

##@ Release

# make images: REGISTRY names (and, when given, receives) the images and
# charts; SIGNING_KEY signs the images; VERSION tags them.
REGISTRY ?=
SIGNING_KEY ?=
VERSION ?= v0.1.0

.PHONY: images
images: ## Build reproducible multi-arch (linux/amd64, linux/arm64) OCI images of machine-controller, infra-controller and kubevirt-installer without a container engine into bin/images (SBOM attached, signed with SIGNING_KEY=cosign.key), the charts pinned by digest into bin/charts, static installers into bin/release; REGISTRY=host/path pushes images and charts there.
	$(GO) run ./hack/images -o $(LOCALBIN)/images -charts $(LOCALBIN)/charts -release $(LOCALBIN)/release -version $(VERSION) \
		$(if $(REGISTRY),-registry $(REGISTRY) -push) $(if $(SIGNING_KEY),-signing-key $(SIGNING_KEY))

##@ Verification

.PHONY: verify
verify: verify-fmt verify-modules verify-gen vet lint verify-writepath ## Run every static check (formatting, modules, generated files, vet, lint, write path).

.PHONY: verify-fmt
verify-fmt: ## Fail if any Go file is not gofmt-ed.
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [[ -n "$$out" ]]; then echo "not gofmt-ed:"; echo "$$out"; exit 1; fi

.PHONY: verify-modules
verify-modules: ## Fail if go.mod/go.sum are not tidy.
	$(GO) mod tidy -diff

.PHONY: verify-gen
verify-gen: generate ## Fail if make generate changes a tracked file or leaves an untracked one.
	@out="$$(git status --porcelain -- charts/machine-controller/files charts/machine-controller/crds charts/infra-controller/files charts/infra-controller/crds charts/kubevirt/crds charts/kubevirt/files charts/cdi/crds charts/cdi/files test/crds pkg/apis addons/kubevirt-csi-snapshot-crds)"; if [[ -n "$$out" ]]; then echo "generated files are stale, run make generate:"; echo "$$out"; git diff -- charts; exit 1; fi

# The infra-controller writes through package apply; a write that must stay
# direct says why with a //writepath:direct directive (hack/writepath).
.PHONY: verify-writepath
verify-writepath: ## Fail on an infra-controller write that bypasses package apply without saying why.
	$(GO) run ./hack/writepath ./pkg/infracontroller/...

.PHONY: vet
vet: ## Run go vet.
	$(GO) vet ./...

# Another golangci-lint on the machine (an editor's) shares the cache lock:
# lint waits for it instead of failing.
.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint with .golangci.yml.
	$(GOLANGCI_LINT) run --allow-serial-runners ./...

$(GOLANGCI_LINT):
	@mkdir -p $(LOCALBIN)
	GOBIN=$(LOCALBIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(LOCALBIN)/golangci-lint $(GOLANGCI_LINT)

$(CONTROLLER_GEN):
	@mkdir -p $(LOCALBIN)
	GOBIN=$(LOCALBIN) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)
	mv $(LOCALBIN)/controller-gen $(CONTROLLER_GEN)
