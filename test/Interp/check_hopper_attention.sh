#!/usr/bin/env bash
# The sm_90a FlashAttention path on the CPU SIMT executor (issue 19, acceptance
# 5; label "interp"): examples/flash_attention.py at (batch 1, heads 2,
# seq_len 256), and examples/flash_attention_gqa.py (4 query heads on 2 KV
# heads), is lowered for --target=sm_90a and run by tl-run --device=cpu
# --check against the tile-level reference evaluator; the remark (--remarks)
# must name the path the case is meant to take (hopper: warp_specialize.c's
# attention form -- TMA of Q, K, V from a producer warpgroup, Q·Kᵀ and P·V as
# wgmma; cpwgmma: cp.async + wgmma without warp specialization; mma: the cp.async + mma.sync fallback, with its
# reason), and the
# check must print PASS.  Two schedule seeds per case (the executor's random
# warp interleavings, docs/simt-ir.md).  Sequence lengths 200 and 208 (not
# tile multiples): the partial last tiles, and a check of the tail mask
# against a tiling without one.
# benchmarks/kernels/flash_attention.py over BSHD tensors (its copies' regions (1, rows, 1, cols)) too.
# Usage: check_hopper_attention.sh TL_RUN EXAMPLES_DIR
set -uo pipefail
tlrun=$1 ex=$2
fail=0 n=0
run() { # expected path (hopper|cpwgmma|mma), text the remark must contain, label, tl-run arguments...
  local want=$1 why=$2 label=$3; shift 3
  for seed in 1 7; do
    local out path
    out=$("$tlrun" --device=cpu --target=sm_90a --check --remarks --schedule-seed=$seed "$@" 2>&1)
    if grep -q "attention loop takes the Hopper path" <<<"$out"; then path=hopper
    elif grep -q "stays on the cp.async + mma.sync path" <<<"$out"; then path=mma
    elif grep -q "takes the cp.async + wgmma path" <<<"$out"; then path=cpwgmma
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
# BSHD tensors (Q[batch, seq_len, heads, dim]: benchmarks/kernels/flash_attention.py's default layout, that of
# TileLang's example): each copy's region is (1, rows, 1, cols), the TMA box (1, rows, 1, 64); seq_len 200: rows
# past the sequence's end in dimension 1 read as zeros
bk=$(dirname "$ex")/benchmarks/kernels/flash_attention.py
for c in False True; do
  run hopper "$two" "FA BSHD (1,2,256,64) causal=$c" -D batch=1 -D heads=2 -D seq_len=256 -D dim=64 -D is_causal=$c "$bk"
  run hopper "$two" "FA BSHD (2,3,256,64) causal=$c" -D batch=2 -D heads=3 -D seq_len=256 -D dim=64 -D is_causal=$c "$bk"
  run hopper "$two" "FA BSHD (1,2,200,128) causal=$c (partial tiles)" -D batch=1 -D heads=2 -D seq_len=200 -D dim=128 \
    -D is_causal=$c "$bk"
done
gqa=$ex/flash_attention_gqa.py
run hopper "$two" "GQA (1,4 query / 2 kv heads,256,128) as written (128x128/256 threads/2 stages)" -D batch=1 \
  -D heads=4 -D kv_heads=2 -D seq_len=256 "$gqa"
run hopper "$two" "GQA (1,4 query / 2 kv heads,256,128) causal" -D batch=1 -D heads=4 -D kv_heads=2 -D seq_len=256 \
  -D is_causal=True "$gqa"
# sequence lengths that are not tile multiples (acceptance 2): TMA zero-fills the rows of Q, K and V past
# seq_len, the example masks the last key block's columns >= seq_len (non-causal; the causal mask covers
# them), the epilogue's stores skip the rows past seq_len
odd="-D batch=1 -D heads=2 -D seq_len=200"
run hopper "$two" "FA (1,2,200,64) 128x128/256 threads/2 stages (partial tiles)" $odd -D dim=64 $hop "$fa"
run hopper "$two" "FA (1,2,200,64) 128x128/256 threads/2 stages causal (partial tiles)" $odd -D dim=64 $hop \
  -D is_causal=True "$fa"
run hopper "$two" "FA (1,2,200,128) 128x128/256 threads/2 stages (partial tiles)" $odd -D dim=128 $hop "$fa"
run hopper "$two" "GQA (1,4 query / 2 kv heads,200,128) (partial tiles)" -D batch=1 -D heads=4 -D kv_heads=2 \
  -D seq_len=200 "$gqa"
run hopper "$two" "GQA (1,4 query / 2 kv heads,200,128) causal (partial tiles)" -D batch=1 -D heads=4 -D kv_heads=2 \
  -D seq_len=200 -D is_causal=True "$gqa"
# The reference evaluator runs the same program, so the runs above cannot see a wrong mask; this one
# can: seq_len 208 on sm_90a with 128x128 tiles (a partial key block of 80 rows) against 16x16 tiles on
# sm_80 (208 = 13 x 16: no partial tile, no mask) on the same inputs -- the outputs' sum and abs_sum
# (tl-run's lines) agree within 1e-4 x abs_sum; the example with its tail mask removed must disagree.
sums() { "$tlrun" --device=cpu "$@" 2>&1 | sed -n 's/^output Output .* sum=\([^ ]*\) abs_sum=\(.*\)$/\1 \2/p'; }
nomask="${TMPDIR:-/tmp}/fa_nomask_$$.py"
sed 's/elif seq_len % block_N != 0:/elif False:/' "$fa" > "$nomask"
for c in False True; do
  s208="-D batch=1 -D heads=2 -D seq_len=208 -D dim=64 -D is_causal=$c"
  want=$(sums --target=sm_80 $s208 -D block_M=16 -D block_N=16 -D num_stages=1 -D threads=32 "$fa")
  got=$(sums --target=sm_90a $s208 $hop "$fa")
  bad=$(sums --target=sm_90a $s208 $hop "$nomask")
  n=$((n + 1))
  verdict=$(awk -v w="$want" -v g="$got" -v b="$bad" -v causal=$c 'BEGIN {
    split(w, W, " "); split(g, G, " "); split(b, B, " ")
    tol = 1e-4 * W[2]; d = G[1] - W[1]; e = G[2] - W[2]; f = B[1] - W[1]; h = B[2] - W[2]
    ok = W[2] > 0 && d * d <= tol * tol && e * e <= tol * tol
    sens = causal == "True" || f * f > tol * tol || h * h > tol * tol  # causal: the mask covers the tail
    print (ok && sens) ? "ok" : "FAIL" }')
  if [[ "$verdict" != ok ]]; then
    echo "FAIL FA (1,2,208,64) causal=$c sm_90a 128x128 vs sm_80 16x16: sums '$got' vs '$want' (tail mask removed: '$bad')"
    fail=1
  else
    echo "ok   FA (1,2,208,64) causal=$c sm_90a 128x128 (partial key block) vs sm_80 16x16: sum/abs_sum $got vs $want"
  fi
done
rm -f "$nomask"
run hopper "over 1 consumer warpgroups" "FA (1,2,256,128) 64x64/128 threads/1 stage causal" $small -D dim=128 \
  -D block_M=64 -D block_N=64 -D num_stages=1 -D threads=128 -D is_causal=True "$fa"
# block_M 128 on the kernel's 128 threads, 1 stage (TileLang's example_mha_fwd_bshd as its main() runs it): the
# attention form runs it on 256 consumer threads (warp_specialize.c ws_attn_threads)
wide="256 threads where the kernel asks for 128"
run hopper "$wide" "FA BSHD (1,2,256,128) 128x128 on the kernel's 128 threads, 1 stage" -D batch=1 -D heads=2 \
  -D seq_len=256 -D dim=128 -D num_stages=1 -D threads=128 -D is_causal=False "$bk"
run hopper "$wide" "FA BSHD (1,2,200,64) 128x128 on the kernel's 128 threads, 1 stage, causal (partial tiles)" \
  -D batch=1 -D heads=2 -D seq_len=200 -D dim=64 -D num_stages=1 -D threads=128 -D is_causal=True "$bk"
# the ping-pong schedule (pass config tl.attention_pingpong): the consumer warpgroups take turns at the
# tensor cores on named barriers 2 and 3 (a protocol error is a deadlock the executor reports)
pp="taking turns at the tensor cores (ping-pong)"
pc=--pass-config=tl.attention_pingpong
run hopper "$pp" "FA ping-pong (1,2,256,128)" $pc $small -D dim=128 $hop "$fa"
run hopper "$pp" "FA ping-pong (1,2,256,128) causal" $pc $small -D dim=128 $hop -D is_causal=True "$fa"
run hopper "$pp" "FA ping-pong (1,2,200,64) (partial tiles)" $pc $odd -D dim=64 $hop "$fa"
run hopper "$pp" "GQA ping-pong (1,4 query / 2 kv heads,200,128) causal" $pc -D batch=1 -D heads=4 -D kv_heads=2 \
  -D seq_len=200 -D is_causal=True "$gqa"
run hopper "no ping-pong: it needs 2 consumer warpgroups" "FA ping-pong asked at 64x64/128 threads" $pc $small \
  -D dim=128 -D block_M=64 -D block_N=64 -D num_stages=1 -D threads=128 "$fa"
# the overlap schedule (pass config tl.attention_overlap, lib/Lower/Hopper/attention_overlap.c): each consumer's
# softmax of key block k runs while its P·V of block k - 1 is in flight (wgmma.wait_group 1); the executor
# checks the stage releases against the pending wgmma reads of K and V (a release before the wait is an
# error), every access to S, O (pending accumulators) or P (a pending rs A fragment) against the waits (an
# access before the wait that covers its group is an error: a missing wait_group 1, or the rescale of O
# before wait_group 0, is reported), and the results against the reference
ov="the softmax of each key block overlapping its own P·V of the one before (overlap)"
oc=--pass-config=tl.attention_overlap
for d in 64 128; do
  run hopper "$ov" "FA overlap (1,2,256,$d)" $oc $small -D dim=$d $hop "$fa"
  run hopper "$ov" "FA overlap (1,2,256,$d) causal" $oc $small -D dim=$d $hop -D is_causal=True "$fa"
  run hopper "$ov" "FA overlap (1,2,200,$d) (partial tiles)" $oc $odd -D dim=$d $hop "$fa"
  run hopper "$ov" "FA overlap (1,2,200,$d) causal (partial tiles)" $oc $odd -D dim=$d $hop -D is_causal=True "$fa"
done
run hopper "$ov" "FA overlap (1,1,640,256) 128x80/256 threads/2 stages" $oc -D batch=1 -D heads=1 -D seq_len=640 \
  -D dim=256 -D block_M=128 -D block_N=80 -D num_stages=2 -D threads=256 "$fa"
run hopper "$ov" "FA overlap (1,2,256,128) 64x64/128 threads/1 stage causal" $oc $small -D dim=128 -D block_M=64 \
  -D block_N=64 -D num_stages=1 -D threads=128 -D is_causal=True "$fa"
run hopper "$ov" "GQA overlap (1,4 query / 2 kv heads,200,128) causal" $oc -D batch=1 -D heads=4 -D kv_heads=2 \
  -D seq_len=200 -D is_causal=True "$gqa"
run hopper "$ov" "FA overlap (1,2,100,64) causal (one key block: the rotated loop runs 0 times)" $oc -D batch=1 \
  -D heads=2 -D seq_len=100 -D dim=64 $hop -D is_causal=True "$fa"
run hopper "$ov" "FA overlap (1,2,384,64) 128x64/256 threads/3 stages causal" $oc -D batch=1 -D heads=2 -D seq_len=384 \
  -D dim=64 -D block_M=128 -D block_N=64 -D num_stages=3 -D threads=256 -D is_causal=True "$fa"
run hopper "no overlap: tl.attention_pingpong is set" "FA overlap and ping-pong both asked" $oc $pc $small -D dim=128 \
  $hop "$fa"
# the overlap loop is as exact as the source order: the same sums as the default schedule
for c in False True; do
  a="-D batch=1 -D heads=2 -D seq_len=200 -D dim=128 -D is_causal=$c $hop"
  want=$(sums --target=sm_90a --schedule-seed=3 $a "$fa")
  got=$(sums --target=sm_90a --schedule-seed=3 $oc $a "$fa")
  n=$((n + 1))
  if [[ -z "$want" || "$got" != "$want" ]]; then
    echo "FAIL FA overlap (1,2,200,128) causal=$c: sums '$got', default schedule '$want'"; fail=1
  else
    echo "ok   FA overlap (1,2,200,128) causal=$c: sum/abs_sum $got, identical to the default schedule's"
  fi
done
# examples/flash_attention.py as written (128x64 on 128 threads) runs on two consumer warpgroups ("$wide")
run hopper "$wide" "FA as written (128x64 on the kernel's 128 threads)" $small -D dim=128 "$fa"
run hopper "$wide" "FA as written at (1,2,200,128) (partial tiles)" $odd -D dim=128 "$fa"
# the fallback: a local buffer (per-thread state) keeps the kernel's 128 threads and the mma.sync path
sed 's/^\( *\)acc_o = T.alloc_fragment/\1mine = T.alloc_local([1], accum_dtype)\n&/' "$fa" > "${TMPDIR:-/tmp}/fa_local_$$.py"
run mma "block_M is not 64 x the consumer warpgroups" "FA as written with a T.alloc_local (mma.sync path)" $small \
  -D dim=128 "${TMPDIR:-/tmp}/fa_local_$$.py"
rm -f "${TMPDIR:-/tmp}/fa_local_$$.py"
run cpwgmma "tl.disable_warp_specialized is set" "FA --pass-config=tl.disable_warp_specialized (cp.async + wgmma)" \
  --pass-config=tl.disable_warp_specialized $small -D dim=128 $hop "$fa"
echo "check_hopper_attention: $n runs"
exit $fail
