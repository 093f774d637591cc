#!/usr/bin/env bash
# Tries the nine TileLang example files of issue 13's acceptance point 2, each
# given UNCHANGED, in four steps per kernel:
#   ptx        `tl-opt --emit=ptx` (default target) with the --kernel and -D
#              values of the file's own main() (the sizes it runs on a GPU);
#   ptx90      the same for --target=sm_90a, then `ptxas -arch=sm_90a` on it
#              (when ptxas is on PATH);
#   cpu        `tl-run --device=cpu --check` with the same kernel at a size
#              the CPU executor runs in seconds;
#   cpu90      the same with --target=sm_90a (the Hopper lowering: wgmma,
#              TMA, warp specialisation, run by the CPU executor).
# Prints one line per step: PASS, or FAIL with the first error. Then, under
# "other kernels", kernels of the same files that acceptance does not name,
# with the same steps (their failures are listed, not counted).
#   usage: scripts/try-tilelang-examples.sh CHECKOUT [BUILD_DIR]
# CHECKOUT is a tile-ai/tilelang checkout (tested at a35008a42) holding
# examples/; BUILD_DIR defaults to build/ (tl-opt and tl-run in it). The
# kernel cache is off (TL_CACHE=0) unless TL_CACHE is set.
# Exit status: the number of failed steps of the nine files (0: all pass).
set -uo pipefail
src=${1:?usage: try-tilelang-examples.sh CHECKOUT [BUILD_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
bld=${2:-$root/build}
ex=$src/examples
[ -d "$ex" ] || { echo "try-tilelang-examples: $src has no examples/" >&2; exit 2; }
fails=0 counting=1
export TL_CACHE=${TL_CACHE:-0}
ptx=/tmp/tte.$$.ptx

step() {  # label tool args...
  local label=$1 tool=$2; shift 2
  local out rc=0
  if [ "$tool" = ptxas ]; then out=$(ptxas "$@" 2>&1) || rc=$?; : >/tmp/tte.$$.out
  else out=$(timeout 600 "$bld/$tool" "$@" 2>&1 >/tmp/tte.$$.out) || rc=$?; fi
  [ "$tool" = tl-opt ] && cp /tmp/tte.$$.out "$ptx"
  if [ "$tool" = tl-run ] && [ "$rc" -eq 0 ] && ! grep -q '^check: PASS' /tmp/tte.$$.out; then rc=1; fi
  if [ "$rc" -eq 0 ]; then printf '%-60s PASS\n' "$label"
  else
    local msg
    msg=$( { printf '%s\n' "$out"; cat /tmp/tte.$$.out; } | grep -m1 -E 'error:|FAIL' || true)
    [ -n "$msg" ] || msg="exit $rc"
    printf '%-60s FAIL %s\n' "$label" "${msg#"$src"/}"
    fails=$((fails + counting))
  fi
  rm -f /tmp/tte.$$.out
}

# file | kernel | -D for the GPU-size PTX compile | -D (and --dim) for the CPU check
# [| label suffix]
run() {
  local f=$1 k=$2 ptxd=$3 cpud=$4
  local k_label="$k${5:+ $5}"
  # shellcheck disable=SC2086
  step "$f $k_label ptx" tl-opt --emit=ptx --kernel="$k" $ptxd "$ex/$f"
  # shellcheck disable=SC2086
  step "$f $k_label ptx90" tl-opt --emit=ptx --target=sm_90a --kernel="$k" $ptxd "$ex/$f"
  if command -v ptxas >/dev/null && [ -s "$ptx" ]; then
    step "$f $k_label ptxas90" ptxas -arch=sm_90a "$ptx" -o /dev/null
  fi
  # shellcheck disable=SC2086
  step "$f $k_label cpu" tl-run --device=cpu --check --kernel="$k" $cpud "$ex/$f"
  # shellcheck disable=SC2086
  step "$f $k_label cpu90" tl-run --device=cpu --target=sm_90a --check --kernel="$k" $cpud "$ex/$f"
  rm -f "$ptx"
}

run quickstart.py matmul \
  "-D M=1024 -D N=1024 -D K=1024 -D block_M=128 -D block_N=128 -D block_K=32" \
  "-D M=256 -D N=256 -D K=128 -D block_M=128 -D block_N=128 -D block_K=32"
run gemm/example_gemm.py matmul \
  "-D M=1024 -D N=1024 -D K=1024 -D block_M=128 -D block_N=128 -D block_K=32" \
  "-D M=256 -D N=256 -D K=128 -D block_M=128 -D block_N=128 -D block_K=32"
run elementwise/example_elementwise_add.py elementwise_add \
  "-D M=1024 -D N=1024 -D block_M=32 -D block_N=32 -D threads=128 -D in_dtype=float32 -D out_dtype=float32" \
  "-D M=256 -D N=256 -D block_M=32 -D block_N=32 -D threads=128 -D in_dtype=float32 -D out_dtype=float32"
run gemv/example_gemv.py naive_gemv \
  "-D N=1024 -D K=1024 -D BLOCK_N=128 -D BLOCK_K=128" \
  "-D N=256 -D K=256 -D BLOCK_N=128 -D BLOCK_K=128"
run norm/rms_norm.py rms_norm \
  "-D M=8192 -D N=8192 -D blk_m=1" \
  "-D M=64 -D N=1024 -D blk_m=1"
for c in False True; do
  run flash_attention/example_mha_fwd_bshd.py flashattn \
    "-D batch=8 -D heads=32 -D seq_len=4096 -D dim=128 -D is_causal=$c -D block_M=128 -D block_N=128 -D num_stages=1 -D threads=128" \
    "-D batch=1 -D heads=2 -D seq_len=256 -D dim=64 -D is_causal=$c -D block_M=64 -D block_N=64 -D num_stages=1 -D threads=128" \
    "is_causal=$c"
  run flash_attention/example_mha_fwd_bhsd.py flashattn \
    "-D batch=1 -D heads=1 -D seq_q=256 -D seq_kv=256 -D dim=64 -D is_causal=$c -D block_M=64 -D block_N=64 -D num_stages=1 -D threads=128" \
    "-D batch=1 -D heads=1 -D seq_q=256 -D seq_kv=256 -D dim=64 -D is_causal=$c -D block_M=64 -D block_N=64 -D num_stages=1 -D threads=128" \
    "is_causal=$c"
done
run gemm_splitk/example_tilelang_gemm_splitk.py matmul \
  "-D M=1024 -D N=1024 -D K=1024 -D block_M=128 -D block_N=128 -D block_K=32 -D split_k=4" \
  "-D M=256 -D N=256 -D K=256 -D block_M=128 -D block_N=128 -D block_K=32 -D split_k=4"
run dynamic_shape/example_dynamic.py matmul_dynamic_mnk \
  "-D block_M=128 -D block_N=128 -D block_K=32 -D trans_A=False -D trans_B=False -D in_dtype=float16 -D out_dtype=float16 -D accum_dtype=float32 -D num_stages=3 -D threads=128" \
  "-D block_M=128 -D block_N=128 -D block_K=32 -D trans_A=False -D trans_B=False -D in_dtype=float16 -D out_dtype=float16 -D accum_dtype=float32 -D num_stages=3 -D threads=128 --dim m=256 --dim n=256 --dim k=128"

echo "-- other kernels of these files (not counted)"
counting=0
step "quickstart.py without -D (its matmul.compile)" tl-run --device=cpu --check "$ex/quickstart.py"
run norm/rms_norm.py rms_norm_splitk \
  "-D M=8192 -D N=8192 -D blk_m=1 -D blk_k=512" \
  "-D M=64 -D N=1024 -D blk_m=1 -D blk_k=512"
run gemv/example_gemv.py naive_splitk_gemv \
  "-D N=1024 -D K=1024 -D BLOCK_N=32 -D BLOCK_K=32" \
  "-D N=256 -D K=256 -D BLOCK_N=32 -D BLOCK_K=32"
run gemv/example_gemv.py splitk_gemv_vectorized_tvm \
  "-D N=1024 -D K=1024 -D BLOCK_N=2 -D reduce_threads=32" \
  "-D N=256 -D K=256 -D BLOCK_N=2 -D reduce_threads=32"
run gemv/example_gemv.py gemv_alloc_reducer \
  "-D M=1024 -D N=1024 -D block_M=128 -D block_N=128" \
  "-D M=256 -D N=256 -D block_M=128 -D block_N=128"
run dynamic_shape/example_dynamic.py matmul_dynamic_mnk \
  "-D block_M=128 -D block_N=128 -D block_K=32 -D trans_A=True -D trans_B=True -D in_dtype=float16 -D out_dtype=float16 -D accum_dtype=float32 -D num_stages=3 -D threads=128" \
  "-D block_M=128 -D block_N=128 -D block_K=32 -D trans_A=True -D trans_B=True -D in_dtype=float16 -D out_dtype=float16 -D accum_dtype=float32 -D num_stages=3 -D threads=128 --dim m=100 --dim n=72 --dim k=96" \
  "trans_A=trans_B=True m=100,n=72,k=96"
exit "$fails"
