#!/usr/bin/env bash
# Regenerates the committed PTX resources from kernels/*.cu. Run it after changing any .cu or .cuh file:
#   device-ptx/regen-ptx.sh            # rewrite src/main/resources/io/gda4j/ptx/*.ptx
#   device-ptx/regen-ptx.sh --check    # CI: fail if the committed PTX is stale, then assemble it with ptxas
# Needs nvcc (CUDA 13.0: the PTX depends on the compiler version, so regenerate with the one CI uses).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="$here/src/main/resources/io/gda4j/ptx"
arch=${GDA4J_PTX_ARCH:-sm_90}
command -v nvcc >/dev/null || { echo "regen-ptx: nvcc not found; install the CUDA 13.0 toolkit" >&2; exit 3; }
mode=${1:-write}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for cu in "$here"/kernels/*.cu; do
  name=$(basename "$cu" .cu)
  # -lineinfo off and relative includes keep the output free of machine-specific paths.
  (cd "$here" && nvcc -std=c++17 -arch="$arch" -ptx -Iinclude "kernels/$name.cu" -o "$tmp/$name.ptx")
done
if [ "$mode" = "--check" ]; then
  status=0
  for f in "$tmp"/*.ptx; do
    name=$(basename "$f")
    if ! cmp -s "$f" "$out/$name"; then
      echo "regen-ptx: $name is stale: run device-ptx/regen-ptx.sh and commit the result" >&2; status=1
    fi
  done
  for f in "$out"/*.ptx; do
    [ -f "$tmp/$(basename "$f")" ] || { echo "regen-ptx: $(basename "$f") has no kernels/*.cu source" >&2; status=1; }
    ptxas -arch="$arch" "$f" -o /dev/null || { echo "regen-ptx: ptxas rejected $(basename "$f")" >&2; status=1; }
  done
  [ $status = 0 ] && echo "regen-ptx: committed PTX is current and assembles for $arch"
  exit $status
fi
mkdir -p "$out"
rm -f "$out"/*.ptx
cp "$tmp"/*.ptx "$out/"
ls -1 "$out"
