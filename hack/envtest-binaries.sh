#!/usr/bin/env bash
# Builds the control-plane binaries that envtest needs (kube-apiserver, etcd and
# kube-controller-manager) from the Go module proxy, because no prebuilt
# binaries can be downloaded here. The result is cached outside the repository,
# keyed by version, and the script is a no-op when the binaries already exist.
#
# Prints the directory holding the binaries on stdout (for KUBEBUILDER_ASSETS);
# progress goes to stderr.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-3.6.16}"
CACHE_ROOT="${ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubevirt-kkp/envtest}"
DEST="$CACHE_ROOT/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}-1"

log() { echo "envtest-binaries: $*" >&2; }
complete() { [[ -x "$DEST/kube-apiserver" && -x "$DEST/etcd" && -x "$DEST/kube-controller-manager" ]]; }

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
  (cd "$dir" && go mod tidy >/dev/null 2>&1 &&
    go build -trimpath -ldflags "$ldflags" -o "$DEST/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver &&
    mv "$DEST/kube-apiserver.tmp" "$DEST/kube-apiserver" &&
    go build -trimpath -ldflags "$ldflags" -o "$DEST/kube-controller-manager.tmp" k8s.io/kubernetes/cmd/kube-controller-manager &&
    mv "$DEST/kube-controller-manager.tmp" "$DEST/kube-controller-manager")
}

start=$SECONDS
if [[ ! -x "$DEST/etcd" ]]; then
  log "building etcd v${ETCD_VERSION} (about 1 minute on a cold cache and an idle 2-core machine)"
  build_etcd
fi
if [[ ! -x "$DEST/kube-apiserver" || ! -x "$DEST/kube-controller-manager" ]]; then
  log "building kube-apiserver and kube-controller-manager v${K8S_VERSION} (about 5 minutes on a cold cache and an idle 2-core machine)"
  build_kube
fi
log "done in $((SECONDS - start))s: $DEST"
echo "$DEST"
