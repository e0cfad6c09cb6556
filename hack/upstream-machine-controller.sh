#!/usr/bin/env bash
# upstream-machine-controller.sh [--kubevirt-only] SRC OUT: builds Kubermatic's
# machine-controller (cmd/machine-controller) from a checkout of
# kubermatic/machine-controller in SRC into the binary OUT, for the
# side-by-side run of the scale benchmark (test/scale,
# UPSTREAM_MACHINE_CONTROLLER=OUT).
#
# SRC is a scratch copy outside this repository: the script edits it. The
# module proxy refuses go.anx.io/go-anxcloud, which only the Anexia provider
# imports, so that provider is taken out of the provider registry (one import
# and one map entry in pkg/cloudprovider/provider.go); every other provider,
# KubeVirt's included, is built as is.
#
# --kubevirt-only leaves KubeVirt the only provider in the registry, so the
# other providers' packages and cloud SDKs are not compiled in: on a loaded
# 2-CPU machine the full build takes most of an hour, this one a fraction.
# The controller's code is the same; the binary is smaller, so its memory is
# a lower bound of the full binary's.
#
# Neither make test nor make bench calls this script.
set -euo pipefail

keep=all
if [[ ${1:-} == --kubevirt-only ]]; then
  keep=KubeVirt
  shift
fi
if [[ $# -ne 2 ]]; then
  echo "usage: $0 [--kubevirt-only] SRC OUT" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
out=$(realpath -m "$2")
registry=$src/pkg/cloudprovider/provider.go

if [[ ! -f $src/go.mod ]] || ! grep -q '^module k8c.io/machine-controller$' "$src/go.mod"; then
  echo "$src is not a checkout of k8c.io/machine-controller" >&2
  exit 1
fi

# Drops from the registry the Anexia entry, or with --kubevirt-only every
# entry but KubeVirt's, and the imports of the dropped providers' packages.
python3 - "$registry" "$keep" <<'PY'
import re, sys

path, keep = sys.argv[1], sys.argv[2]
text = open(path).read()
entry = re.compile(
    r"\n\t\tproviderconfig\.CloudProvider(\w+): func\(cvr providerconfig\.ConfigVarResolver\) "
    r"cloudprovidertypes\.Provider \{\n(?:\t\t\t[^\n]*\n)+?\t\t\},")
imp = re.compile(r'\n\t(?:\w+ )?"k8c\.io/machine-controller/pkg/cloudprovider/provider/(\w+)"')
names = [m.group(1) for m in entry.finditer(text)]
if "KubeVirt" not in names:
    sys.exit(f"{path}: no KubeVirt entry in the provider registry")


def dropped(name):
    return name != "KubeVirt" if keep == "KubeVirt" else name == "Anexia"


def dropped_package(pkg):
    return pkg != "kubevirt" if keep == "KubeVirt" else pkg == "anexia"


text = entry.sub(lambda m: "" if dropped(m.group(1)) else m.group(0), text)
text = imp.sub(lambda m: "" if dropped_package(m.group(1)) else m.group(0), text)
open(path, "w").write(text)
PY

commit=unknown
if git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
  commit=$(git -C "$src" rev-parse HEAD)
elif [[ -f $src/.upstream-commit ]]; then
  commit=$(cat "$src/.upstream-commit")
fi

mkdir -p "$(dirname "$out")"
(cd "$src" && go build -trimpath -o "$out" ./cmd/machine-controller)
echo "built $out from k8c.io/machine-controller at $commit (providers: $keep)"
