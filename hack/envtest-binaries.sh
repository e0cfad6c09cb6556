#!/usr/bin/env bash
# Builds the control-plane binaries that envtest needs (kube-apiserver, etcd,
# kube-controller-manager and kube-scheduler) from the Go module proxy, because no prebuilt
# binaries can be downloaded here. The result is cached outside the repository,
# keyed by version, and the script is a no-op when the binaries already exist;
# only a missing binary is built (kube-scheduler joined the set later).
#
# Prints the directory holding the binaries on stdout (for KUBEBUILDER_ASSETS);
# progress goes to stderr.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-3.6.16}"
CACHE_ROOT="${ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubevirt-kkp/envtest}"
DEST="$CACHE_ROOT/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}-1"

log() { echo "envtest-binaries: $*" >&2; }
KUBE_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler)
complete() {
  [[ -x "$DEST/etcd" ]] || return 1
  local b
  for b in "${KUBE_BINARIES[@]}"; do [[ -x "$DEST/$b" ]] || return 1; done
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
export GOFLAGS=-mod=mod

build_etcd() {
  local dir="$WORK/etcd"
  mkdir -p "$dir"
  cat >"$dir/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  (cd "$dir" && go mod init envtest/etcd >/dev/null 2>&1 &&
    go get "go.etcd.io/etcd/server/v3@v${ETCD_VERSION}" >/dev/null 2>&1 &&
    go mod tidy >/dev/null 2>&1 &&
    go build -trimpath -o "$DEST/etcd.tmp" . && mv "$DEST/etcd.tmp" "$DEST/etcd")
}

build_kube() {
  local dir="$WORK/kube"
  mkdir -p "$dir"
  (cd "$dir" && go mod init envtest/kube >/dev/null 2>&1)
  local gomod
  gomod="$(cd "$dir" && go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')"
  [[ -f "$gomod" ]] || { log "cannot download k8s.io/kubernetes@v${K8S_VERSION}"; return 1; }
  {
    echo "require k8s.io/kubernetes v${K8S_VERSION}"
    grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging/src/k8s\.io/[a-z0-9-]+' "$gomod" |
      awk -v v="v0.${K8S_VERSION#1.}" '{print "replace " $1 " => " $1 " " v}'
  } >>"$dir/go.mod"
  cat >"$dir/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
)
GO
  cat >"$dir/main.go" <<'GO'
package main

func main() {}
GO
  # Stamp the version so the API server reports v${K8S_VERSION} (discovery,
  # compatibility-version defaults) instead of v0.0.0-master.
  local pkg=k8s.io/component-base/version minor="${K8S_VERSION#1.}"
  local ldflags="-X ${pkg}.gitVersion=v${K8S_VERSION} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor%%.*} -X ${pkg}.gitTreeState=clean"
  (cd "$dir" && go mod tidy >/dev/null 2>&1) || return 1
  local b
  for b in "${KUBE_BINARIES[@]}"; do
    [[ ! -x "$DEST/$b" ]] || continue
    (cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "$DEST/$b.tmp" "k8s.io/kubernetes/cmd/$b" &&
      mv "$DEST/$b.tmp" "$DEST/$b") || return 1
  done
}

start=$SECONDS
if [[ ! -x "$DEST/etcd" ]]; then
  log "building etcd v${ETCD_VERSION} (about 1 minute on a cold cache and an idle 2-core machine)"
  build_etcd
fi
if ! complete; then
  log "building the missing ones of ${KUBE_BINARIES[*]} v${K8S_VERSION} (about 6 minutes for all on a cold cache and an idle 2-core machine)"
  build_kube
fi
log "done in $((SECONDS - start))s: $DEST"
echo "$DEST"
