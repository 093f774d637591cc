#!/usr/bin/env bash
# The main job: compile examples/gemm.py (TileLang's standard GEMM) with
# libtilelang and run it.
#   - With a CUDA driver and GPU: as written (1024^3, f16, 128x128x32 tiles, 3
#     stages) through examples/gemm.c: every element checked against cuBLAS,
#     then TFLOP/s of ours and of cuBLAS and their ratio, from the same run.
#   - Without: `tl-run --check` at 256^3 on the CPU SIMT executor (the lowered
#     per-thread program, warp by warp), every element checked against the
#     tile-level reference evaluator; tl-run says that no GPU was found.
# Usage: scripts/main-job.sh [BUILD_DIR]   (default: build)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
cd "$root"
out=$("$build"/gpu-bin/example_gemm 2>&1)
rc=$?
if [[ $rc -ne 77 ]]; then   # 77: no CUDA driver or GPU
  printf '%s\n' "$out"
  exit $rc
fi
exec "$build"/tl-run --check -D M=256 -D N=256 -D K=256 examples/gemm.py
