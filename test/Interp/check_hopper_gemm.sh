#!/usr/bin/env bash
# The sm_90a GEMM path on the CPU SIMT executor (issue 12, acceptance 7; label
# "interp"): each case is lowered for --target=sm_90a and run by tl-run
# --device=cpu --check against the tile-level reference evaluator; the
# remark (--remarks) must name the path the case is meant to take (the Hopper
# path: TMA + mbarriers + wgmma + a producer warpgroup; the cp.async + wgmma
# path (lib/Lower/Hopper/gemm_wgmma.c); or the cp.async + mma.sync fallback;
# for the stream-K cases, whether stream-K was chosen), and
# the check must print PASS.  Two schedule seeds per
# case (the executor's random warp interleavings, docs/simt-ir.md).
# Usage: check_hopper_gemm.sh TL_RUN EXAMPLES_DIR GPU_KERNELS_DIR
set -uo pipefail
tlrun=$1 ex=$2 kd=$3
fail=0 n=0
run() { # expected path (hopper|cpwgmma|mma) or stream-K choice (sk|nosk), label, tl-run arguments...
  local want=$1 label=$2; shift 2
  for seed in 1 7; do
    local out path
    out=$("$tlrun" --device=cpu --target=sm_90a --check --remarks --schedule-seed=$seed "$@" 2>&1)
    if [[ "$want" == sk || "$want" == nosk ]]; then
      if grep -q "; stream-K: " <<<"$out"; then path=sk
      elif grep -q "; no stream-K: " <<<"$out"; then path=nosk
      else path=none; fi
    elif grep -q "takes the Hopper path" <<<"$out"; then path=hopper
    elif grep -q "stays on the cp.async + mma.sync path" <<<"$out"; then path=mma
    elif grep -q "takes the cp.async + wgmma path" <<<"$out"; then path=cpwgmma
    else path=none; fi
    n=$((n + 1))
    if [[ "$path" != "$want" ]] || ! grep -q "^check: PASS" <<<"$out"; then
      echo "FAIL $label (seed $seed): path $path (want $want)"
      tail -5 <<<"$out"
      fail=1
    else
      echo "ok   $label (seed $seed): $path path, check: PASS"
    fi
  done
}
g=$ex/gemm.py k=$kd/gemm_general.py
run hopper "gemm.py as written, 256^3" -D M=256 -D N=256 -D K=256 "$g"
run hopper "gemm.py 128x256x64/256 threads, tail (200,264,136)" -D M=200 -D N=264 -D K=136 -D block_M=128 \
  -D block_N=256 -D block_K=64 -D threads=256 "$g"
run hopper "gemm.py (512,512,256) 128x256x64/256 --sms=2: 4 tiles on 2 blocks, TMA-store epilogue" --sms=2 \
  -D M=512 -D N=512 -D K=256 -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 "$g"
run cpwgmma "gemm.py (53,129,71): rows not multiples of 16 bytes (no TMA; cp.async + wgmma)" -D M=53 -D N=129 -D K=71 "$g"
run hopper "gemm.py K of one tile" -D M=128 -D N=128 -D K=32 "$g"
for s in 1 2 4 5; do run hopper "gemm.py num_stages=$s" -D M=128 -D N=256 -D K=256 -D num_stages=$s "$g"; done
run hopper "gemm.py f16 accumulator" -D M=128 -D N=128 -D K=256 -D accum_dtype=float16 "$g"
run hopper "gemm_general.py transpose_A" -D M=128 -D N=128 -D K=128 -D trans_A=True "$k"
run hopper "gemm_general.py transpose_B bf16" -D M=128 -D N=256 -D K=128 -D trans_B=True -D dtype=bfloat16 \
  -D out_dtype=bfloat16 "$k"
run hopper "gemm_general.py 256x128x64/256 threads, transpose_A+B" -D M=256 -D N=128 -D K=128 -D block_M=256 \
  -D block_N=128 -D block_K=64 -D threads=256 -D trans_A=True -D trans_B=True "$k"
run hopper "gemm_dynamic_m.py m=17" --dim m=17 -D N=128 -D K=128 "$ex/gemm_dynamic_m.py"
# C staged through shared memory (gemm_c_shared.py, TileLang's autotune form: B stored N x K, T.use_swizzle(10),
# 128x256x64, 3 stages, 256 threads by default): "copy" and "relu" are fused into the fragment's epilogue,
# "scale" writes the shared tile in a T.Parallel loop on the consumers' named barrier
c=$kd/gemm_c_shared.py
run hopper "gemm_c_shared.py copy, 256^3" -D M=256 -D N=256 -D K=128 "$c"
run hopper "gemm_c_shared.py copy --sms=2 (512,512,128): several tiles a block, TMA store" --sms=2 -D M=512 \
  -D N=512 -D K=128 "$c"
run hopper "gemm_c_shared.py relu, tail (200,264,136)" -D M=200 -D N=264 -D K=136 -D epilogue=relu "$c"
run hopper "gemm_c_shared.py scale --sms=2 (512,512,128): C_s reused across tiles" --sms=2 -D M=512 -D N=512 \
  -D K=128 -D epilogue=scale "$c"
run hopper "gemm_c_shared.py scale, transpose_A, 64x128x32/128 threads, 2 stages, no swizzle" -D M=128 -D N=256 \
  -D K=128 -D trans_A=True -D block_M=64 -D block_N=128 -D block_K=32 -D threads=128 -D num_stages=2 \
  -D swizzle_panel=0 -D epilogue=scale "$c"
run hopper "gemm_c_shared.py relu, transpose_A, 128x128x128, NN" -D M=256 -D N=256 -D K=256 -D trans_A=True \
  -D trans_B=False -D block_N=128 -D block_K=128 -D epilogue=relu "$c"
run hopper "gemm_c_shared.py scale bf16 256x128x64, tail (300,200,200)" -D M=300 -D N=200 -D K=200 \
  -D block_M=256 -D block_N=128 -D dtype=bfloat16 -D out_dtype=bfloat16 -D epilogue=scale "$c"
run mma "gemm.py --pass-config=tl.disable_wgmma" --pass-config=tl.disable_wgmma -D M=128 -D N=128 -D K=64 "$g"
for pc in tl.disable_tma_lower tl.disable_warp_specialized; do
  run cpwgmma "gemm.py --pass-config=$pc" --pass-config=$pc -D M=128 -D N=128 -D K=64 "$g"
done
# Stream-K (lib/Lower/Hopper/stream_k.c): the remark must say whether it was chosen ("stream-K:" or "no stream-K:",
# want sk / nosk) and the check must pass; --sms sets the SM count the persistent grid plans for, so
# that small shapes give whole waves followed by last-wave tiles spanning 2, 3 and 4 blocks, and blocks with two
# partial segments (slots 2b and 2b + 1).
t="-D block_M=128 -D block_N=256 -D block_K=64 -D threads=256"
on=--pass-config=tl.enable_stream_k  # stream-K is off by default
run nosk "no stream-K 256^3 on 132 SMs: 2 tiles, fewer than the SMs" $on -D M=256 -D N=256 -D K=256 $t "$g"
run sk "stream-K --sms=3 (256,512,256): 4 tiles x 4, a whole wave of 3, the last tile over 3 blocks" $on --sms=3 \
  -D M=256 -D N=512 -D K=256 $t "$g"
run sk "stream-K --sms=3 (128,1280,512): 5 tiles x 8, the last 2 over 3 blocks (block 1: two partials)" $on --sms=3 \
  -D M=128 -D N=1280 -D K=512 $t "$g"
run sk "stream-K --sms=3 (128,1024,512): 4 tiles x 8, the last tile over 3 blocks" $on --sms=3 \
  -D M=128 -D N=1024 -D K=512 $t "$g"
run sk "stream-K --sms=4 (384,512,320) rasterized, transpose_B bf16: 6 tiles x 5, the last 2 over 4 blocks" $on --sms=4 \
  -D M=384 -D N=512 -D K=320 $t -D swizzle_panel=2 -D trans_B=True -D dtype=bfloat16 -D out_dtype=bfloat16 "$k"
run sk "stream-K --sms=4 tail (300,520,320): 9 tiles x 5, 2 waves, the last tile over 4 blocks" $on --sms=4 -D M=300 \
  -D N=520 -D K=320 $t "$g"
run nosk "no stream-K --sms=2 (256,512,256): 4 tiles fill 2 waves" $on --sms=2 -D M=256 -D N=512 -D K=256 $t "$g"
run nosk "no stream-K: 3 k-tiles per tile" $on -D M=256 -D N=256 -D K=192 $t "$g"
run nosk "no stream-K by default (--sms=3 (256,512,256), which takes it when on)" --sms=3 -D M=256 -D N=512 \
  -D K=256 $t "$g"
echo "check_hopper_gemm: $n runs"
exit $fail
