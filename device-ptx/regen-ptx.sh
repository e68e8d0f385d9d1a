#!/usr/bin/env bash
# Regenerates the committed PTX resources from their .cu sources. Run it after changing any .cu or .cuh file:
#   device-ptx/regen-ptx.sh            # rewrite the committed .ptx files
#   device-ptx/regen-ptx.sh --check    # CI: fail if the committed PTX is stale, then assemble it with ptxas
# Sources and where their PTX goes:
#   device-ptx/kernels/*.cu  -> device-ptx/src/main/resources/io/gda4j/ptx/   (the toolkit's modules)
#   samples/kernels/*.cu     -> samples/src/main/resources/io/gda4j/samples/  (user-style sample kernels)
# Needs nvcc (CUDA 13.0: the PTX depends on the compiler version, so regenerate with the one CI uses).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
arch=${GDA4J_PTX_ARCH:-sm_90}
command -v nvcc >/dev/null || { echo "regen-ptx: nvcc not found; install the CUDA 13.0 toolkit" >&2; exit 3; }
mode=${1:-write}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
status=0
# regen SRC_DIR OUT_DIR (both relative to the repository root)
regen() {
  local src=$1 out=$2 gen="$tmp/$2"
  mkdir -p "$gen"
  for cu in "$root/$src"/*.cu; do
    name=$(basename "$cu" .cu)
    # -lineinfo off and relative paths keep the output free of machine-specific paths; sample kernels are built
    # exactly as a user builds theirs (README), with -I device-ptx/include from the repository root.
    (cd "$root" && nvcc -std=c++17 -arch="$arch" -ptx -I device-ptx/include "$src/$name.cu" -o "$gen/$name.ptx")
  done
  if [ "$mode" = "--check" ]; then
    for f in "$gen"/*.ptx; do
      name=$(basename "$f")
      if ! cmp -s "$f" "$root/$out/$name"; then
        echo "regen-ptx: $out/$name is stale: run device-ptx/regen-ptx.sh and commit the result" >&2; status=1
      fi
    done
    for f in "$root/$out"/*.ptx; do
      # Names of anonymous-namespace statics carry a hash of the source's absolute path: such PTX differs per checkout.
      if grep -q '_INTERNAL_' "$f"; then
        echo "regen-ptx: $out/$(basename "$f") has path-dependent symbol names (_INTERNAL_...: a static __shared__ or" \
             "__device__ variable in an anonymous namespace); put those functions in a named namespace" >&2; status=1
      fi
      [ -f "$gen/$(basename "$f")" ] || { echo "regen-ptx: $out/$(basename "$f") has no $src/*.cu source" >&2; status=1; }
      ptxas -arch="$arch" "$f" -o /dev/null || { echo "regen-ptx: ptxas rejected $out/$(basename "$f")" >&2; status=1; }
    done
  else
    mkdir -p "$root/$out"
    rm -f "$root/$out"/*.ptx
    cp "$gen"/*.ptx "$root/$out/"
    (cd "$root" && ls -1 "$out"/*.ptx)
  fi
}
regen device-ptx/kernels device-ptx/src/main/resources/io/gda4j/ptx
regen samples/kernels samples/src/main/resources/io/gda4j/samples
if [ "$mode" = "--check" ]; then
  [ $status = 0 ] && echo "regen-ptx: committed PTX is current and assembles for $arch"
  exit $status
fi
