#!/usr/bin/env bash
# Builds the upstream binaries the tests run (KubeVirt v1.9.0's and CDI
# v1.65.0's own code, from the tool modules under test/upstream), so that
# admission, CRDs, RBAC and controllers are judged by upstream's code. The
# result is cached outside the repository, keyed by the tool modules'
# content, and the script is a no-op when the binaries already exist.
#
# Prints the directory holding the binaries on stdout (for UPSTREAM_BINARIES);
# progress goes to stderr.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE_ROOT="${UPSTREAM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubevirt-kkp/upstream}"
# The checksum database does not answer for two pseudo-versions KubeVirt and
# CDI depend on; go.sum pins them.
export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}github.com/openshift,github.com/rhobs"
export GOFLAGS=-mod=readonly

log() { echo "upstream-binaries: $*" >&2; }

# The key covers the two tool modules only: test/upstream's own files belong
# to the main module and change nothing that is built here.
key="$(cd "$ROOT/test/upstream" && find kubevirt cdi -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print0 |
  LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)"
DEST="$CACHE_ROOT/$key"
BINARIES=(kubevirt-upstream virt-controller cdi-upstream cdi-controller)

complete() {
  local b
  for b in "${BINARIES[@]}"; do [[ -x "$DEST/$b" ]] || return 1; done
}
if complete; then
  echo "$DEST"
  exit 0
fi
# --check only tells whether the binaries are there (exit 0) or not (1).
[[ "${1:-}" != --check ]] || exit 1
mkdir -p "$DEST"
# Test processes of several packages may run this script at once on a cold
# cache: one builds, the others wait for it and then find the binaries.
exec 9>"$CACHE_ROOT/.lock"
flock 9
if complete; then
  echo "$DEST"
  exit 0
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# kubevirt.io/virt-template-{api,client-go,engine} v0.2.0 are required by
# KubeVirt v1.9.0. Where the module proxy serves them, go.sum checks them;
# where it refuses them, their unchanged source is used through replace
# directives in a copy of go.mod (VIRT_TEMPLATE_SRC, or the shared
# third_party folder beside the repository).
virt_template_modfile() {
  local mod="$ROOT/test/upstream/kubevirt/go.mod"
  if (cd "$ROOT/test/upstream/kubevirt" && go mod download kubevirt.io/virt-template-api kubevirt.io/virt-template-client-go) >/dev/null 2>&1; then
    echo "$mod"
    return
  fi
  local src="${VIRT_TEMPLATE_SRC:-}" candidate
  if [[ -z "$src" ]]; then
    for candidate in "$ROOT/../shared/third_party/virt-template-v0.2.0" /work/shared/third_party/virt-template-v0.2.0; do
      if [[ -d "$candidate/virt-template-api" ]]; then src="$candidate"; break; fi
    done
  fi
  if [[ -z "$src" || ! -d "$src/virt-template-api" ]]; then
    log "the module proxy refuses kubevirt.io/virt-template-* v0.2.0 and no source was found: set VIRT_TEMPLATE_SRC to a folder holding virt-template-api, virt-template-client-go and virt-template-engine"
    return 1
  fi
  log "the module proxy refuses kubevirt.io/virt-template-* v0.2.0: building with their source in $src"
  cp "$mod" "$WORK/kubevirt.mod"
  cp "$ROOT/test/upstream/kubevirt/go.sum" "$WORK/kubevirt.sum"
  local m
  for m in api client-go engine; do
    echo "replace kubevirt.io/virt-template-$m => $src/virt-template-$m" >>"$WORK/kubevirt.mod"
  done
  echo "$WORK/kubevirt.mod"
}

build_kubevirt() {
  local modfile
  modfile="$(virt_template_modfile)"
  (cd "$ROOT/test/upstream/kubevirt" &&
    go build -modfile="$modfile" -trimpath -o "$WORK/kubevirt-upstream" . &&
    go build -modfile="$modfile" -trimpath -o "$WORK/virt-controller" kubevirt.io/kubevirt/cmd/virt-controller)
  mv "$WORK/kubevirt-upstream" "$WORK/virt-controller" "$DEST/"
}

build_cdi() {
  (cd "$ROOT/test/upstream/cdi" &&
    go build -trimpath -o "$WORK/cdi-upstream" . &&
    go build -trimpath -o "$WORK/cdi-controller" kubevirt.io/containerized-data-importer/cmd/cdi-controller)
  mv "$WORK/cdi-upstream" "$WORK/cdi-controller" "$DEST/"
}

start=$SECONDS
if [[ ! -x "$DEST/kubevirt-upstream" || ! -x "$DEST/virt-controller" ]]; then
  log "building KubeVirt v1.9.0's admission webhooks, generators and virt-controller (about 2.5 minutes on a cold cache and an idle 2-core machine, once)"
  build_kubevirt
fi
if [[ ! -x "$DEST/cdi-upstream" || ! -x "$DEST/cdi-controller" ]]; then
  log "building CDI v1.65.0's generators and cdi-controller (about 1.5 minutes on a cold cache and an idle 2-core machine, once)"
  build_cdi
fi
# Builds of other tool-module contents are several hundred MB each.
find "$CACHE_ROOT" -mindepth 1 -maxdepth 1 -type d ! -name "$key" -exec rm -rf {} +
log "done in $((SECONDS - start))s: $DEST"
echo "$DEST"
