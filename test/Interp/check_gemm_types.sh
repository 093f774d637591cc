#!/usr/bin/env bash
# T.gemm over the mma.sync instructions beyond f16/bf16 on the CPU SIMT
# executor (issue 14; label "interp"): test/GPU/kernels/gemm_general.py (the
# kernel of TileLang's kernel GEMM tests, dtypes and transposes as parameters) at the
# sizes of TileLang's kernel GEMM tests (testing/python/kernel: f32 computed
# as tf32 512x1024x768 with 64x128x32 tiles nn/nt/tn, int8 -> int32
# 512x1024x768 with 128x128x64 nt/tn, float64 512x512x512 with 64x32x16 nt),
# plus uint8 and float64 nn at smaller sizes, float8_e4m3 nt at 512x1024x768
# and float8_e5m2 nn on sm_89/sm_90a (fp8 mma needs sm_89), each run by
# `tl-run --device=cpu --check` against the tile-level reference evaluator
# (which rounds and accumulates as the instruction does: the two agree bit
# for bit, test/unit/test_gemm_types.c), and once on sm_90a, where the loop
# must stay on the cp.async + mma.sync path with a remark (wgmma has these
# dtypes only in a later issue).
# Then the T.gemm forms (issue 14) of test/GPU/kernels/gemm_forms.py at the
# sizes of TileLang's gemm_sr / gemm_rs tests (512x1024x768, 128x128x32,
# float16 with a float16 accumulator, no pipelining: sr nt and rs tn with the
# Square policy, through the gemm-stage pass), plus rs with FullRow (A in
# registers) and sr pipelined with float32 accumulation.
# With TL_GEMM_TYPES_SMALL=1 (the ASan+UBSan build, where TileLang's sizes
# took 10 minutes) every case runs at 128x256x128 instead (the last -D wins).
# Usage: check_gemm_types.sh TL_RUN GEMM_GENERAL_PY GEMM_FORMS_PY
set -uo pipefail
tlrun=$1 k=$2 forms=$3
small=()
[[ -n "${TL_GEMM_TYPES_SMALL:-}" ]] && small=(-D M=128 -D N=256 -D K=128)
fail=0 n=0
run() { # label, tl-run arguments...
  local label=$1; shift
  local out
  out=$("$tlrun" --device=cpu --check "$@" "${small[@]}" "$k" 2>&1)
  n=$((n + 1))
  if grep -q "^check: PASS" <<<"$out"; then echo "ok   $label"
  else echo "FAIL $label"; tail -5 <<<"$out"; fail=1; fi
}
TF="-D dtype=float32 -D out_dtype=float32 -D M=512 -D N=1024 -D K=768 -D block_M=64 -D block_N=128 -D block_K=32"
I8="-D dtype=int8 -D out_dtype=int32 -D accum_dtype=int32 -D block_M=128 -D block_N=128 -D block_K=64"
F64="-D dtype=float64 -D out_dtype=float64 -D accum_dtype=float64 -D block_M=64 -D block_N=32 -D block_K=16"
# shellcheck disable=SC2086
run "tf32 nn 512x1024x768" $TF
# shellcheck disable=SC2086
run "tf32 nt 512x1024x768" $TF -D trans_B=True
# shellcheck disable=SC2086
run "tf32 tn 512x1024x768" $TF -D trans_A=True
# shellcheck disable=SC2086
run "int8 nt 512x1024x768" $I8 -D M=512 -D N=1024 -D K=768 -D trans_B=True
# shellcheck disable=SC2086
run "int8 tn 512x1024x768" $I8 -D M=512 -D N=1024 -D K=768 -D trans_A=True
# shellcheck disable=SC2086
run "uint8 nn 256x256x256" ${I8/int8/uint8} -D M=256 -D N=256 -D K=256
# shellcheck disable=SC2086
run "float64 nt 512x512x512" $F64 -D M=512 -D N=512 -D K=512 -D trans_B=True
# shellcheck disable=SC2086
run "float64 nn 128x128x64" $F64 -D M=128 -D N=128 -D K=64
# float8 (m16n8k32 .e4m3/.e5m2 -> f32, sm_89+): inputs are random floats in [-1, 1) rounded to the format
FP8="--target=sm_89 -D out_dtype=float32 -D accum_dtype=float32 -D block_M=128 -D block_N=128 -D block_K=64"
# shellcheck disable=SC2086
run "float8_e4m3 nt 512x1024x768" $FP8 -D dtype=float8_e4m3 -D M=512 -D N=1024 -D K=768 -D trans_B=True
# shellcheck disable=SC2086
run "float8_e5m2 nn 256x256x256 (sm_90a)" ${FP8/sm_89/sm_90a} -D dtype=float8_e5m2 -D M=256 -D N=256 -D K=256
# sm_90a: the loop stays on mma.sync (remark), and still checks
out=$("$tlrun" --device=cpu --target=sm_90a --remarks --check -D dtype=float32 -D out_dtype=float32 -D M=128 -D N=128 -D K=64 "$k" 2>&1)
n=$((n + 1))
if grep -q "stays on the cp.async + mma.sync path: a copied tile is not float16/bfloat16" <<<"$out" &&
   grep -q "^check: PASS" <<<"$out"; then echo "ok   tf32 on sm_90a: mma.sync path with a remark"
else echo "FAIL tf32 on sm_90a"; tail -5 <<<"$out"; fail=1; fi
k=$forms
run "sr form nt 512x1024x768 (f16 accumulator)" -D form=sr
run "rs form tn 512x1024x768 (f16 accumulator, Square)" -D form=rs -D trans_A=True -D trans_B=False
run "rs form nt 256x256x128 (FullRow: registers)" -D form=rs -D policy=1 -D M=256 -D N=256 -D K=128
run "sr form nn 256x256x128 (2 stages, f32 accumulator)" -D form=sr -D trans_B=False -D num_stages=2 \
  -D accum_dtype=float32 -D M=256 -D N=256 -D K=128
echo "gemm_types: $n cases, $([[ $fail -eq 0 ]] && echo all pass || echo some FAIL)"
exit $fail
