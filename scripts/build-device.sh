#!/usr/bin/env bash
# Builds the self-contained GPU bundle (docs/testing.md "The bundle"): a
# separate CMake build in build-device-cmake/ with LLVM linked statically
# into libtilelang.so (-DTL_LLVM_STATIC=ON), then gathers
#   build-device/lib/libtilelang.so.0     (the SONAME the binaries need; stripped; needs only glibc,
#                                          libstdc++, libz, libzstd), and libtilelang.so -> libtilelang.so.0
#   build-device/bin/<GPU tests, benchmarks>  (rpath $ORIGIN/../lib, stripped)
#   build-device/examples/*.py, build-device/test/GPU/kernels/ (kernel files)
#   build-device/run-gpu.sh                (copy of scripts/run-gpu.sh)
#   build-device/python/tilelang_ptx, build-device/examples/python, build-device/test/GPU/python
#                                          (the Python package for PYTHONPATH with its C extension
#                                          _fastcall.abi3.so, its examples, its GPU checks)
#   build-device/reference/mma-gemm/mma_gemm.cu (the CUDA reference GEMM, built there by run-gpu.sh:
#                                          a program, and a cubin that bench_gemm loads)
# plus any non-glibc shared library a binary needs that the GPU host may lack
# (never glibc's libraries, libstdc++ or libgcc).  Usage:
#   scripts/build-device.sh [-j N]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc)
if [[ "${1:-}" == "-j" && -n "${2:-}" ]]; then jobs=$2; fi
bdir=build-device-cmake
out=build-device

cmake -S . -B "$bdir" -DCMAKE_BUILD_TYPE=Release -DTL_LLVM_STATIC=ON -DTL_BUILD_TESTS=OFF >/dev/null
cmake --build "$bdir" -j "$jobs" --target tilelang gpu-all
if cmake --build "$bdir" --target help 2>/dev/null | grep ' tl-run' >/dev/null; then
  cmake --build "$bdir" -j "$jobs" --target tl-run tl-opt || true
fi

rm -rf "$out"
mkdir -p "$out/lib" "$out/bin" "$out/examples" "$out/test/GPU"
cp -L "$bdir/libtilelang.so" "$out/lib/libtilelang.so.0"
strip --strip-unneeded "$out/lib/libtilelang.so.0"
ln -s libtilelang.so.0 "$out/lib/libtilelang.so"
for exe in "$bdir"/gpu-bin/*; do
  [[ -f "$exe" && -x "$exe" ]] || continue
  cp "$exe" "$out/bin/"
done
for tool in tl-run tl-opt; do
  t=$(find "$bdir" -maxdepth 3 -name "$tool" -type f -perm -u+x | head -1)
  if [[ -n "$t" ]]; then cp "$t" "$out/bin/"; fi
done
strip "$out"/bin/* 2>/dev/null || true
cp examples/*.py "$out/examples/"
mkdir -p "$out/examples/tune" && cp examples/tune/*.py "$out/examples/tune/"
cp scripts/sanitize-hopper.sh scripts/ptx-ab.sh scripts/hopper-acceptance.sh scripts/two-gpu-acceptance.sh "$out/"
if [[ -d test/GPU/kernels ]]; then cp -r test/GPU/kernels "$out/test/GPU/"; fi
# the kernels of TileLang's language ops (issue 14), run by bin/test_lang_ops
mkdir -p "$out/test/Interp" && cp -r test/Interp/ops "$out/test/Interp/"
# The hand-written CUDA mma.sync reference GEMM, kept beside the repository
# in the team's reference folder (which the GPU host does not have):
# run-gpu.sh builds it there with nvcc, as a program that it runs and as a
# cubin that bench_gemm times interleaved with ours (the ratio).
ref_src=$root/../shared/reference/mma-gemm/mma_gemm.cu
if [[ -f "$ref_src" ]]; then
  mkdir -p "$out/reference/mma-gemm"
  cp "$ref_src" "$out/reference/mma-gemm/"
fi
# The benchmark scripts run-gpu.sh runs there (issue 6): Triton GEMM and
# first call (python3), tl-opt's whole-process time.
mkdir -p "$out/benchmarks/triton" "$out/benchmarks/compile"
cp benchmarks/triton/*.py "$out/benchmarks/triton/" 2>/dev/null || true
cp benchmarks/compile/*.py benchmarks/compile/*.sh "$out/benchmarks/compile/" 2>/dev/null || true
# The kernels of bench_launch and bench_launch_cpu (issue 16), which open them relative to the bundle.
mkdir -p "$out/benchmarks/launch"
cp benchmarks/launch/*.py "$out/benchmarks/launch/"
# FlashAttention next to PyTorch SDPA (issue 7), run by run-gpu.sh.
mkdir -p "$out/benchmarks/attention"
cp benchmarks/attention/*.py "$out/benchmarks/attention/" 2>/dev/null || true
# The Python package (used through PYTHONPATH on the GPU host, which has no network), its examples and
# the GPU checks of it (test/GPU/python/run_python_gpu.sh, run by run-gpu.sh).
mkdir -p "$out/python" "$out/examples/python" "$out/test/GPU/python"
cp -r python/tilelang_ptx "$out/python/"
find "$out/python" -name __pycache__ -prune -exec rm -rf {} +
# Its C extension (the hot path of kernel(A, B); python/setup.py owns the recipe): stable ABI, so the
# _fastcall.abi3.so built with this machine's Python 3.11 headers loads on the GPU host's Python >= 3.11.
(cd python && /usr/bin/python3 setup.py -q build_ext --build-lib "$root/$out/python" \
   --build-temp "$root/$bdir/python-ext") >/dev/null
[[ -f "$out/python/tilelang_ptx/_fastcall.abi3.so" ]] ||
  { echo "build-device: the extension tilelang_ptx/_fastcall.abi3.so was not built (python3-dev?)" >&2; exit 1; }
strip --strip-unneeded "$out/python/tilelang_ptx/_fastcall.abi3.so"
cp examples/python/*.py "$out/examples/python/"
cp test/GPU/python/run_python_gpu.sh test/GPU/python/run_python_gpu.py "$out/test/GPU/python/"
cp scripts/run-gpu.sh "$out/run-gpu.sh"
chmod +x "$out/run-gpu.sh"

# Shared libraries the binaries need beyond glibc/libstdc++/libgcc and the
# ones every Ubuntu host has (libz, libzstd): copy them next to libtilelang.
# Never libcuda (bin/libtl_aot_gemm.so links it: the host's driver provides it).
skip='^(linux-vdso|libcuda\.|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libresolv\.|ld-linux|libstdc\+\+|libgcc_s|libz\.|libzstd\.|libtilelang)'
for f in "$out"/lib/*.so.0 "$out"/bin/*; do
  ldd "$f" 2>/dev/null | awk '/=>/ {print $1, $3}' | while read -r name path; do
    if [[ "$name" =~ $skip ]] || [[ ! -f "$path" ]]; then continue; fi
    [[ -f "$out/lib/$name" ]] || { cp -L "$path" "$out/lib/$name"; strip --strip-unneeded "$out/lib/$name" || true; }
  done
done

# The library must not link libcuda (it is dlopen'ed at run time).
if ldd "$out/lib/libtilelang.so.0" | grep -q libcuda; then
  echo "build-device: libtilelang.so links libcuda; it must dlopen it" >&2
  exit 1
fi
echo "bundle: $out ($(du -sh "$out" | cut -f1))"
ls -la "$out/lib" "$out/bin"
