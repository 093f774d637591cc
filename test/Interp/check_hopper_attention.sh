#!/usr/bin/env bash
# The sm_90a FlashAttention path on the CPU SIMT executor (issue 19, acceptance
# 5; label "interp"): examples/flash_attention.py at (batch 1, heads 2,
# seq_len 256), and examples/flash_attention_gqa.py (4 query heads on 2 KV
# heads), is lowered for --target=sm_90a and run by tl-run --device=cpu
# --check against the tile-level reference evaluator; the remark (--remarks)
# must name the path the case is meant to take (hopper: warp_specialize.c's
# attention form -- TMA of Q, K, V from a producer warpgroup, Q·Kᵀ and P·V as
# wgmma; mma: the cp.async + mma.sync fallback, with its reason), and the
# check must print PASS.  Two schedule seeds per case (the executor's random
# warp interleavings, docs/simt-ir.md).
# Usage: check_hopper_attention.sh TL_RUN EXAMPLES_DIR
set -uo pipefail
tlrun=$1 ex=$2
fail=0 n=0
run() { # expected path (hopper|mma), text the remark must contain, label, tl-run arguments...
  local want=$1 why=$2 label=$3; shift 3
  for seed in 1 7; do
    local out path
    out=$("$tlrun" --device=cpu --target=sm_90a --check --remarks --schedule-seed=$seed "$@" 2>&1)
    if grep -q "attention loop takes the Hopper path" <<<"$out"; then path=hopper
    elif grep -q "stays on the cp.async + mma.sync path" <<<"$out"; then path=mma
    else path=none; fi
    n=$((n + 1))
    if [[ "$path" != "$want" ]] || ! grep -qF "$why" <<<"$out" || ! grep -q "^check: PASS" <<<"$out"; then
      echo "FAIL $label (seed $seed): path $path (want $want, remark with '$why')"
      tail -5 <<<"$out"
      fail=1
    else
      echo "ok   $label (seed $seed): $path path, check: PASS"
    fi
  done
}
fa=$ex/flash_attention.py
small="-D batch=1 -D heads=2 -D seq_len=256"
hop="-D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256"
two="two T.gemm as wgmma (ss, then rs) over 2 consumer warpgroups"
run hopper "$two" "FA (1,2,256,128) 128x128/256 threads/2 stages" $small -D dim=128 $hop "$fa"
run hopper "$two" "FA (1,2,256,128) 128x128/256 threads/2 stages causal" $small -D dim=128 $hop -D is_causal=True "$fa"
run hopper "$two" "FA (1,2,256,64) 128x128/256 threads/2 stages" $small -D dim=64 $hop "$fa"
run hopper "$two" "FA (1,2,256,64) 128x128/256 threads/2 stages causal" $small -D dim=64 $hop -D is_causal=True "$fa"
run hopper "$two" "FA (1,1,640,256) 128x80/256 threads/2 stages (O staged in Q's bytes)" -D batch=1 -D heads=1 \
  -D seq_len=640 -D dim=256 -D block_M=128 -D block_N=80 -D num_stages=2 -D threads=256 "$fa"
run hopper "$two" "FA (1,2,256,256) 128x64/256 threads/2 stages causal" $small -D dim=256 -D block_M=128 \
  -D block_N=64 -D num_stages=2 -D threads=256 -D is_causal=True "$fa"
# bfloat16: the example with its dtype replaced
sed 's/dtype = "float16"/dtype = "bfloat16"/' "$fa" > "${TMPDIR:-/tmp}/fa_bf16_$$.py"
run hopper "$two" "FA bfloat16 (1,2,256,128) 128x128/256 threads/2 stages causal" $small -D dim=128 $hop \
  -D is_causal=True "${TMPDIR:-/tmp}/fa_bf16_$$.py"
rm -f "${TMPDIR:-/tmp}/fa_bf16_$$.py"
gqa=$ex/flash_attention_gqa.py
run hopper "$two" "GQA (1,4 query / 2 kv heads,256,128) as written (128x128/256 threads/2 stages)" -D batch=1 \
  -D heads=4 -D kv_heads=2 -D seq_len=256 "$gqa"
run hopper "$two" "GQA (1,4 query / 2 kv heads,256,128) causal" -D batch=1 -D heads=4 -D kv_heads=2 -D seq_len=256 \
  -D is_causal=True "$gqa"
run hopper "over 1 consumer warpgroups" "FA (1,2,256,128) 64x64/128 threads/1 stage causal" $small -D dim=128 \
  -D block_M=64 -D block_N=64 -D num_stages=1 -D threads=128 -D is_causal=True "$fa"
run mma "block_M is not 64 x the consumer warpgroups" "FA as written (128x64/128 threads: two m64 blocks a warpgroup)" \
  $small -D dim=128 "$fa"
run mma "tl.disable_warp_specialized is set" "FA --pass-config=tl.disable_warp_specialized" \
  --pass-config=tl.disable_warp_specialized $small -D dim=128 $hop "$fa"
echo "check_hopper_attention: $n runs"
exit $fail
