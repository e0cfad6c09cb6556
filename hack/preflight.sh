#!/usr/bin/env bash
# The first line of `make demo` and `make test`: what the target builds and
# how long its first run takes, printed before the go tool's own output.
# Then it checks what the host needs (Linux, Go, util-linux, user
# namespaces) and, where something is missing, says what and exits 1, so
# that the run does not fail later deep inside a build or a test.
#
# Usage: hack/preflight.sh demo|test
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
target="${1:?usage: $0 demo|test}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/kubevirt-kkp"

if "$ROOT/hack/envtest-binaries.sh" --check >/dev/null 2>&1 && "$ROOT/hack/upstream-binaries.sh" --check >/dev/null 2>&1; then
  case "$target" in
  demo) echo "make demo: etcd, kube-apiserver, kube-controller-manager, KubeVirt's and CDI's controllers are cached in $cache; the demo runs in about a minute" ;;
  test) echo "make test: the control-plane, KubeVirt and CDI binaries are cached in $cache; the tests take about 20 minutes on 2 cores (a fresh-clone CI run: 24 min with make verify)" ;;
  esac
else
  what="etcd 3.6, kube-apiserver and kube-controller-manager 1.36, and KubeVirt v1.9.0's and CDI v1.65.0's controllers from source into $cache (once; about 1.5 GB of Go modules)"
  case "$target" in
  demo) echo "make demo: the first run builds $what: about 15 minutes on an idle 2-core machine, 25 on a busy one, before the demo starts; later runs take about a minute" ;;
  test) echo "make test: the first run builds $what: about 15 minutes on an idle 2-core machine, 25 on a busy one; then the tests take about 20 minutes" ;;
  esac
fi

missing=()
if [[ "$(uname -s)" != Linux ]]; then
  missing+=("Linux (this is $(uname -s)): the control planes' processes end with the parent through Linux's parent-death signal, and cdi-controller runs in Linux namespaces")
fi
if ! command -v go >/dev/null; then
  missing+=("Go: no go in PATH; install the version go.mod names or newer")
fi
tools=()
for tool in flock setpriv unshare mount; do
  command -v "$tool" >/dev/null || tools+=("$tool")
done
if ((${#tools[@]})); then
  missing+=("util-linux: ${tools[*]} not found in PATH")
elif [[ "$(uname -s)" == Linux ]]; then
  # What test/envtest does for cdi-controller: a user namespace (any
  # user), else, for root, a mount namespace alone.
  if ! err="$(unshare --user --map-root-user --mount sh -c 'mount -t tmpfs tmpfs /tmp' 2>&1)" &&
    ! { [[ "$(id -u)" == 0 ]] && unshare --mount sh -c 'mount -t tmpfs tmpfs /tmp' 2>/dev/null; }; then
    missing+=("unprivileged user namespaces (unshare --user --map-root-user --mount: ${err:-refused}): cdi-controller runs in a mount namespace of its own; allow them (sysctl user.max_user_namespaces above 0; kernel.unprivileged_userns_clone=1 where it exists; kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu) or run as root")
  fi
fi
if ((${#missing[@]})); then
  echo "make $target cannot run on this host; it needs:" >&2
  for m in "${missing[@]}"; do echo "  - $m" >&2; done
  exit 1
fi
