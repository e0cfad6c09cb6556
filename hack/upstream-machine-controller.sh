#!/usr/bin/env bash
# upstream-machine-controller.sh SRC OUT: builds Kubermatic's machine-controller
# (cmd/machine-controller) from a checkout of kubermatic/machine-controller in
# SRC into the binary OUT, for the side-by-side run of the scale benchmark
# (test/scale, UPSTREAM_MACHINE_CONTROLLER=OUT).
#
# SRC is a scratch copy outside this repository: the script edits it. The
# module proxy refuses go.anx.io/go-anxcloud, which only the Anexia provider
# imports, so that provider is taken out of the provider registry (one import
# and one map entry in pkg/cloudprovider/provider.go) and its package is
# deleted; every other provider, KubeVirt's included, is built as is.
#
# Neither make test nor make bench calls this script.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 SRC OUT" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
out=$(realpath -m "$2")
registry=$src/pkg/cloudprovider/provider.go

if [[ ! -f $src/go.mod ]] || ! grep -q '^module k8c.io/machine-controller$' "$src/go.mod"; then
  echo "$src is not a checkout of k8c.io/machine-controller" >&2
  exit 1
fi

if grep -q 'provider/anexia"' "$registry"; then
  python3 - "$registry" <<'EOF'
import re, sys
path = sys.argv[1]
text = open(path).read()
text, imports = re.subn(r'\n\t"k8c.io/machine-controller/pkg/cloudprovider/provider/anexia"', "", text)
text, entries = re.subn(
    r'\n\t\tproviderconfig.CloudProviderAnexia: func\(cvr providerconfig.ConfigVarResolver\) cloudprovidertypes.Provider \{\n\t\t\treturn anexia.New\(cvr\)\n\t\t\},',
    "", text)
if imports != 1 or entries != 1:
    sys.exit(f"{path}: expected one Anexia import and one registry entry, found {imports} and {entries}")
open(path, "w").write(text)
EOF
  rm -rf "$src/pkg/cloudprovider/provider/anexia"
fi

commit=unknown
if git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
  commit=$(git -C "$src" rev-parse HEAD)
elif [[ -f $src/.upstream-commit ]]; then
  commit=$(cat "$src/.upstream-commit")
fi

mkdir -p "$(dirname "$out")"
(cd "$src" && go build -trimpath -o "$out" ./cmd/machine-controller)
echo "built $out from k8c.io/machine-controller at $commit"
