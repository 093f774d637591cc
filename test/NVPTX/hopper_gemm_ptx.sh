#!/usr/bin/env bash
# The sm_90a PTX of every GEMM example (issue 12, acceptance 7; label
# "ptxas") and of FlashAttention's Hopper path (issue 19): tl-opt --target=sm_90a must take the Hopper path (the PTX has
# wgmma.mma_async, cp.async.bulk.tensor and setmaxnreg), and the PTX must pass
# `ptxas -arch=sm_90a` without spills.  A missing ptxas is a failure.
# Usage: hopper_gemm_ptx.sh TL_OPT EXAMPLES_DIR
set -uo pipefail
tlopt=$1 ex=$2
ptxas=${TL_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
[[ -x "$ptxas" ]] || { echo "FAIL: ptxas not found (install the CUDA toolkit or set TL_PTXAS)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # label, tl-opt arguments...
  local label=$1; shift
  if ! "$tlopt" --target=sm_90a --emit=ptx "$@" >"$tmp/k.ptx" 2>"$tmp/err"; then
    echo "FAIL $label: $(head -3 "$tmp/err")"; fail=1; return
  fi
  local miss=""
  for w in wgmma.mma_async cp.async.bulk.tensor setmaxnreg; do grep -q "$w" "$tmp/k.ptx" || miss+=" $w"; done
  if [[ -n "$miss" ]]; then echo "FAIL $label: the PTX has no$miss"; fail=1; return; fi
  if ! "$ptxas" -arch=sm_90a -v -o "$tmp/k.cubin" "$tmp/k.ptx" >"$tmp/v" 2>&1; then
    echo "FAIL $label: ptxas -arch=sm_90a: $(head -3 "$tmp/v")"; fail=1; return
  fi
  if grep -E "[1-9][0-9]* bytes spill" "$tmp/v" >/dev/null; then
    echo "FAIL $label: ptxas spills: $(grep -m1 spill "$tmp/v")"; fail=1; return
  fi
  echo "ok   $label: wgmma + TMA, $(grep -m1 -o 'Used [0-9]* registers' "$tmp/v"), no spills"
}
check "gemm.py" "$ex/gemm.py"
check "gemm.py 4096^3 128x256x64/256 threads" -D M=4096 -D N=4096 -D K=4096 -D block_M=128 -D block_N=256 \
  -D block_K=64 -D threads=256 "$ex/gemm.py"
# C staged through shared memory (gemm_c_shared.py: TileLang's autotune form, NT, T.use_swizzle(10), 128x256x64,
# 3 stages, 256 threads): fused into the fragment's epilogue (copy), and a T.Parallel write of C_shared (scale)
for epi in copy scale; do
  check "gemm_c_shared.py $epi 4096^3" -D M=4096 -D N=4096 -D K=4096 -D epilogue=$epi \
    "$(dirname "$ex")/test/GPU/kernels/gemm_c_shared.py"
done
check "gemm_c_shared.py copy bf16 8192^3 transpose_A" -D M=8192 -D N=8192 -D K=8192 -D trans_A=True \
  -D dtype=bfloat16 -D out_dtype=bfloat16 "$(dirname "$ex")/test/GPU/kernels/gemm_c_shared.py"
# stream-K (lib/Lower/Hopper/stream_k.c) at 4096^3 (512 tiles, 3.88 waves on 132 SMs) and 8192^3 (2048, 15.5): the
# fixup's GPU-scope fences and atomic counter are in the PTX that ptxas accepts without spills
check_sk() { # label, tl-opt arguments...
  local label=$1; shift
  check "$label" "$@"
  local miss=""
  for w in fence.acq_rel.gpu atom.global.add.u32; do grep -q "$w" "$tmp/k.ptx" || miss+=" $w"; done
  if [[ -n "$miss" ]]; then echo "FAIL $label: the stream-K PTX has no$miss"; fail=1; fi
}
# (stream-K is off by default: a copy of gemm.py turns it on through @tilelang.jit's pass_configs)
sed 's/@tilelang.jit(out_idx=-1)/@tilelang.jit(out_idx=-1, pass_configs={"tl.enable_stream_k": True})/' \
  "$ex/gemm.py" > "$tmp/gemm_sk.py"
check_sk "gemm.py 4096^3 stream-K" -D M=4096 -D N=4096 -D K=4096 -D block_M=128 -D block_N=256 -D block_K=64 \
  -D threads=256 "$tmp/gemm_sk.py"
check_sk "gemm.py 8192^3 stream-K" -D M=8192 -D N=8192 -D K=8192 -D block_M=128 -D block_N=256 -D block_K=64 \
  -D threads=256 "$tmp/gemm_sk.py"
# FlashAttention's Hopper path (issue 19, warp_specialize.c's attention form): the PTX has both wgmma forms,
# ss (Q·Kᵀ: two descriptors) and rs (P·V: A in four b32 registers), TMA loads and setmaxnreg, and passes ptxas
check_fa() { # label, tl-opt arguments...
  local label=$1; shift
  check "$label" "$@"
  if ! grep -qE 'wgmma\.mma_async[^;]*\}, \{%r[0-9]+, %r[0-9]+, %r[0-9]+, %r[0-9]+\}, %rd' "$tmp/k.ptx" ||
     ! grep -qE 'wgmma\.mma_async[^;]*\}, %rd[0-9]+, %rd[0-9]+, p' "$tmp/k.ptx"; then
    echo "FAIL $label: the PTX lacks the ss or the rs form of wgmma.mma_async"; fail=1
  fi
}
fa="-D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256"
# the overlap schedule (tl.attention_overlap, with fast math as sdpa.py times it): acc_s (S_k), P_{k-1} and O
# live at once; ptxas accepts it without spills, and the PTX has a wgmma.wait_group 1 (Q·Kᵀ complete, P·V in
# flight) before the softmax's ex2 of the loop
sed 's/@tilelang.jit(out_idx=\[3\])/@tilelang.jit(out_idx=[3], pass_configs={"tl.attention_overlap": True, "tl.enable_fast_math": True})/' \
  "$ex/flash_attention.py" > "$tmp/fa_ov.py"
for d in 64 128; do
  for c in False True; do
    check_fa "flash_attention.py (1,32,4096,$d) causal=$c overlap" -D seq_len=4096 -D dim=$d -D is_causal=$c $fa \
      "$tmp/fa_ov.py"
    if ! awk '/wgmma.wait_group.sync.aligned 1;/ { w = 1 } w && /ex2.approx/ { ok = 1 } END { exit !ok }' "$tmp/k.ptx"; then
      echo "FAIL flash_attention.py dim $d causal=$c overlap: no wgmma.wait_group 1 before an ex2"; fail=1
    fi
  done
done
check_fa "flash_attention.py (1,32,4096,128) 128x128/256 threads" -D seq_len=4096 -D dim=128 $fa "$ex/flash_attention.py"
check_fa "flash_attention.py (1,32,4096,128) causal" -D seq_len=4096 -D dim=128 -D is_causal=True $fa \
  "$ex/flash_attention.py"
check_fa "flash_attention.py (1,32,4096,64) 128x128/256 threads" -D seq_len=4096 -D dim=64 $fa "$ex/flash_attention.py"
check_fa "flash_attention.py (1,32,4096,256) 128x80/256 threads" -D seq_len=4096 -D dim=256 -D block_M=128 \
  -D block_N=80 -D threads=256 "$ex/flash_attention.py"
check_fa "flash_attention.py (1,32,4096,128) 192x64/384 threads" -D seq_len=4096 -D block_M=192 -D block_N=64 \
  -D threads=384 "$ex/flash_attention.py"
check_fa "flash_attention.py (1,32,1000,128) 128x128/256 threads (partial tiles, tail mask)" -D seq_len=1000 \
  -D dim=128 $fa "$ex/flash_attention.py"
check_fa "flash_attention.py (1,32,1000,256) 128x64/256 threads causal (partial tiles)" -D seq_len=1000 -D dim=256 \
  -D block_M=128 -D block_N=64 -D threads=256 -D is_causal=True "$ex/flash_attention.py"
# BSHD tensors (benchmarks/kernels/flash_attention.py's default layout): 4-D TMA boxes (1, 128, 1, 64)
for c in False True; do
  check_fa "benchmarks flash_attention.py BSHD (1,32,4096,128) causal=$c" -D batch=1 -D heads=32 -D seq_len=4096 \
    -D dim=128 -D is_causal=$c "$(dirname "$ex")/benchmarks/kernels/flash_attention.py"
done
check "gemm_bf16_nt.py" "$ex/gemm_bf16_nt.py"
# the block-sparse GEMM (issue 31: the loop body one `if BlockMask[by, bx, k]:`, ws_cond.c) at the sizes of
# TileLang's example (1024^3, 128x128x32, 128 threads) with 2 and 3 stages, and 128x256x64 on 256 threads
bs="$(dirname "$ex")/test/Interp/ops/blocksparse_gemm.py"
for s in 2 3; do
  check "blocksparse_gemm.py 1024^3 128x128x32 $s stages" -D M=1024 -D N=1024 -D K=1024 -D block_M=128 \
    -D block_N=128 -D num_stages=$s "$bs"
done
check "blocksparse_gemm.py 4096^3 128x256x64/256 threads" -D M=4096 -D N=4096 -D K=4096 -D block_M=128 \
  -D block_N=256 -D block_K=64 -D thread_num=256 -D num_stages=3 "$bs"
check "gemm_dynamic_m.py" "$ex/gemm_dynamic_m.py"
check "gemm_splitk.py" "$ex/gemm_splitk.py"
# cp.async + wgmma without warp specialization (lib/Lower/Hopper/gemm_wgmma.c, proxy_fence.c): wgmma.mma_async and
# the proxy fence, no TMA and no producer warpgroup; ptxas -arch=sm_90a without spills
check_cpw() { # label, tl-opt arguments...
  local label=$1; shift
  if ! "$tlopt" --target=sm_90a --emit=ptx "$@" >"$tmp/k.ptx" 2>"$tmp/err"; then
    echo "FAIL $label: $(head -3 "$tmp/err")"; fail=1; return
  fi
  if ! grep -q wgmma.mma_async "$tmp/k.ptx" || ! grep -q fence.proxy.async.shared::cta "$tmp/k.ptx" ||
    grep -q -e cp.async.bulk.tensor -e setmaxnreg "$tmp/k.ptx"; then
    echo "FAIL $label: not cp.async + wgmma (wgmma.mma_async and fence.proxy.async, no TMA)"; fail=1; return
  fi
  if ! "$ptxas" -arch=sm_90a -v -o "$tmp/k.cubin" "$tmp/k.ptx" >"$tmp/v" 2>&1; then
    echo "FAIL $label: ptxas -arch=sm_90a: $(head -3 "$tmp/v")"; fail=1; return
  fi
  if grep -E "[1-9][0-9]* bytes spill" "$tmp/v" >/dev/null; then
    echo "FAIL $label: ptxas spills: $(grep -m1 spill "$tmp/v")"; fail=1; return
  fi
  echo "ok   $label: cp.async + wgmma, $(grep -m1 -o 'Used [0-9]* registers' "$tmp/v"), no spills"
}
cw=$(dirname "$ex")/test/Interp/ops/gemm_cp_wgmma.py
check_cpw "gemm_cp_wgmma.py pipe_gemm NN 3 stages" --kernel=pipe_gemm "$cw"
check_cpw "gemm_cp_wgmma.py pipe_gemm NT 2 stages 256 threads" --kernel=pipe_gemm -D trans_B=True -D num_stages=2 \
  -D threads=256 -D block_M=128 -D block_K=64 "$cw"
check_cpw "gemm_cp_wgmma.py dequant_gemm (shared tile from a fragment)" --kernel=dequant_gemm -D block_K=32 "$cw"
check_cpw "gemm_cp_wgmma.py dequant_gemm (T.Parallel stores)" --kernel=dequant_gemm -D via_fragment=False "$cw"
check_cpw "gemm_cp_wgmma.py gqa_decode (ss + rs)" --kernel=gqa_decode -D dim=128 -D block_N=128 "$cw"
check_cpw "gemm.py 503x1017x763 (rows not 16-byte multiples)" -D M=503 -D N=1017 -D K=763 \
  -D block_M=128 -D block_N=256 -D block_K=32 -D threads=256 -D num_stages=2 "$ex/gemm.py"
exit $fail
