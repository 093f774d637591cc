#!/usr/bin/env bash
# compute-sanitizer over the Hopper GEMM path (issue 12, acceptance 4), on the
# GPU host from the bundle (build-device/, scripts/build-device.sh):
#   - racecheck and synccheck on a 512^3 f16 run of every built-in Hopper
#     tile configuration (lib/Runtime/configs.c, hopper_* tables), NN, through
#     test/GPU/kernels/gemm_general.py, each checked against the reference
#     evaluator (tl-run --check);
#   - memcheck on (1000, 1016, 760) (TMA, zero-filled partial boxes) and
#     (503, 1017, 763) (rows not multiples of 16 bytes: the cp.async path);
#   - racecheck, synccheck and memcheck on the GEMM that stages C through
#     shared memory (test/GPU/kernels/gemm_c_shared.py, TileLang's autotune
#     form: B stored N x K, T.use_swizzle(10)), its "copy" epilogue (fused into
#     the fragment's epilogue) and its "scale" epilogue (a T.Parallel write of
#     C_shared on the consumers' named barrier), planned for 3 SMs (--sms=3:
#     several tiles a block, the TMA-store epilogue) and at the default;
#   - racecheck, synccheck and memcheck on FlashAttention's Hopper path
#     (examples/flash_attention.py, issue 19) at (1, 2, 512, 128), causal and
#     not, and racecheck, synccheck at head dim 256; racecheck and synccheck of its
#     ping-pong schedule (tl.attention_pingpong), memcheck at seq_len 1000;
#     racecheck and synccheck of its overlap schedule (tl.attention_overlap) at
#     (1, 2, 512, 128) and (1, 2, 1000, 64), causal and not, memcheck at 1000;
#     racecheck and synccheck of the persistent grid (tl.attention_persistent,
#     planned for 3 SMs: several tiles a block), alone and with the overlap,
#     at (1, 2, 512, 128) and (1, 2, 640, 256), causal and not, memcheck at 1000.
#   - racecheck, synccheck and memcheck on the kernels with explicit barriers and role branches of
#     test/Interp/ops (issue 30: T.ws scopes, T.alloc_barrier + T.barrier_arrive / T.barrier_wait,
#     branches on the warpgroup, uniform local buffers, T.sync_grid's split launches).
# Prints one line per run with the sanitizer's ERROR SUMMARY and the check;
# exit 1 when any run reports an error or fails its check.
# Usage: scripts/sanitize-hopper.sh [BUNDLE]   (default: build-device)
#   SANITIZE_PART=gemm or =fa runs only the GEMM or only the FlashAttention runs (default: both);
#   =fa-persistent only FlashAttention's persistent-grid runs; =lang only the explicit-barrier kernels
#   (SANITIZE_KERNELS=REGEX: only those of them whose kernel name matches); =forms only the block-sparse,
#   float8 and cp.async + wgmma kernels of test/Interp/ops (SANITIZE_KERNELS filters their labels too).
set -uo pipefail
bundle=${1:-$(dirname "$0")/../build-device}
cd "$bundle" || exit 2
export TL_KERNEL_DIR=examples
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
k=test/GPU/kernels/gemm_general.py
# block_M block_N block_K threads num_stages swizzle_panel
configs=("128 256 64 256 3 10" "256 128 64 256 3 10" "128 256 32 256 4 10" "128 128 64 256 4 8"
         "64 256 64 128 4 8" "128 128 64 128 4 8" "128 256 64 256 2 10" "64 128 64 128 4 8"
         "64 64 64 128 6 0" "64 128 64 128 5 0")
one_run() { # tool, label, tl-run arguments...: prints the run's line (and the log's tail on failure); 1 on failure
  local tool=$1 label=$2; shift 2
  local log
  log=$(timeout "${SANITIZE_RUN_TIMEOUT:-300}" "$cs" --tool "$tool" bin/tl-run --device=cuda --check --remarks "$@" 2>&1)
  local summary check path
  summary=$(grep -oE "ERROR SUMMARY: [0-9]+ errors?|RACECHECK SUMMARY: [0-9]+ hazards? displayed \([0-9]+ errors?, [0-9]+ warnings?\)" <<<"$log" | tail -1)
  check=$(grep -o "check: [A-Z]*" <<<"$log" | tail -1)
  path=$(grep -q "takes the Hopper path" <<<"$log" && echo hopper ||
    { grep -q "takes the cp.async + wgmma path" <<<"$log" && echo cp.wgmma || echo mma.sync; })
  printf '%-10s %-40s %-9s %-62s %s\n' "$tool" "$label" "$path" "${summary:-no summary}" "${check:-no check}"
  [[ ( "$summary" == "ERROR SUMMARY: 0 errors" || "$summary" == "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" ) \
     && "$check" == "check: PASS" ]] || { grep -v "^\s*$" <<<"$log" | tail -12; return 1; }
}
# SANITIZE_RUN_TIMEOUT (s, default 300) bounds each run; SANITIZE_JOBS=N (default 4) runs N sanitizer runs at a
# time (each run's CPU reference check is single-threaded; the sanitizers share the GPU); the lines come out in
# the script's order.
jobs_max=${SANITIZE_JOBS:-4}
runs_dir=$(mktemp -d)
nrun=0 printed=0 fail=0
flush_ready() { # prints the finished runs' lines, in order, up to the first run still going
  while (( printed < nrun )) && [[ -s "$runs_dir/$((printed + 1)).rc" ]]; do
    printed=$((printed + 1))
    cat "$runs_dir/$printed.out"
    [[ "$(cat "$runs_dir/$printed.rc")" == 0 ]] || fail=1
  done
}
one() {
  nrun=$((nrun + 1))
  if (( jobs_max <= 1 )); then
    one_run "$@" >"$runs_dir/$nrun.out"; echo $? >"$runs_dir/$nrun.rc"; flush_ready
    return
  fi
  while (( $(jobs -rp | wc -l) >= jobs_max )); do wait -n; flush_ready; done
  ( one_run "$@" >"$runs_dir/$nrun.out"; echo $? >"$runs_dir/$nrun.rc" ) &
}
finish() { # waits for the runs, prints the rest of their lines, exits 1 on any failure
  wait
  flush_ready
  rm -rf "$runs_dir"
  exit $fail
}
part=${SANITIZE_PART:-all}
if [[ "$part" == all || "$part" == lang ]]; then
  ops=test/Interp/ops
  for kc in "warp_specialize.py ws_ring" "warp_specialize.py ws_halves" "warp_specialize.py ws_gemm" \
            "role_branches.py rb_pair" "role_branches.py rb_three" "role_branches.py rb_wgmma" \
            "role_uniform_var.py ru_sparse --int-range 0:4" "role_uniform_var.py ru_loop_scopes" \
            "while_loop.py while_streamk --out-idx=none" "sync_grid.py grid_reverse" \
            "sync_grid.py persistent_partials" "sync_grid.py thread_sides -D N=128000" \
            "cp_async_noinc.py cpa_ring" "cp_async_noinc.py cpa_gemm"; do
    read -r f kn extra <<<"$kc"
    [[ -n "${SANITIZE_KERNELS:-}" && ! "$kn" =~ ${SANITIZE_KERNELS} ]] && continue
    for tool in racecheck synccheck memcheck; do
      # shellcheck disable=SC2086
      one "$tool" "$kn" --kernel="$kn" $extra "$ops/$f"
    done
  done
  [[ "$part" == lang ]] && finish
fi
if [[ "$part" == all || "$part" == forms ]]; then
  # issue 31's forms of 2026-12-07: the block-sparse GEMM loop (a random BlockMask), float8 tiles on the
  # Hopper path (e4m3; e5m2 with block_K 128; several tiles a block), cp.async + wgmma (the proxy fences), and
  # wgmma beside mma.sync T.gemm (an attention backward loop; its float32 dQ sums float16 dS: on the H200 the
  # GPU's order moved 7-14 of 115,200 elements 2e-4 from the reference, the same on sm_80's all-mma.sync);
  # of 2026-12-08: attention on more consumer threads than the kernel asks for (warp-specialized, with
  # consumer-private shared memory in the loop, and cp.async + wgmma)
  ops=test/Interp/ops
  for kc in "blocksparse_gemm.py bsgemm_s2 -D num_stages=2" "blocksparse_gemm.py bsgemm_s3_sms2 --sms=2 -D num_stages=3" \
            "gemm_fp8_hopper.py fp8_e4m3" "gemm_fp8_hopper.py fp8_e5m2_k128 -D dtype=float8_e5m2 -D block_K=128 -D num_stages=2" \
            "gemm_fp8_hopper.py fp8_sms2 --sms=2 -D M=512 -D N=512 -D K=192" \
            "gemm_cp_wgmma.py cpw_pipe --kernel=pipe_gemm -D trans_B=True -D num_stages=2" \
            "gemm_cp_wgmma.py cpw_dequant --kernel=dequant_gemm" "gemm_cp_wgmma.py cpw_gqa --kernel=gqa_decode" \
            "gemm_mixed_wgmma.py mixed_bwd --kernel=attn_bwd --atol=1e-3 --rtol=1e-3" \
            "gemm_mixed_wgmma.py mixed_bwd_causal --kernel=attn_bwd -D is_causal=True --atol=1e-3 --rtol=1e-3" \
            "attention_widen.py widen_ws" "attention_widen.py widen_ws_stats -D stats=True --out-idx=3,4" \
            "attention_widen.py widen_cpw --pass-config=tl.disable_tma_lower"; do
    read -r f label extra <<<"$kc"
    [[ -n "${SANITIZE_KERNELS:-}" && ! "$label" =~ ${SANITIZE_KERNELS} ]] && continue
    for tool in racecheck synccheck memcheck; do
      # shellcheck disable=SC2086
      one "$tool" "$label" $extra "$ops/$f"
    done
  done
  [[ "$part" == forms ]] && finish
fi
[[ "$part" == fa* ]] && configs=()
for c in "${configs[@]}"; do
  read -r bm bn bk th st sw <<<"$c"
  for tool in racecheck synccheck; do
    one "$tool" "512^3 ${bm}x${bn}x${bk}/${th}t/s${st}/swz${sw}" -D M=512 -D N=512 -D K=512 -D block_M="$bm" \
      -D block_N="$bn" -D block_K="$bk" -D threads="$th" -D num_stages="$st" -D swizzle_panel="$sw" "$k"
  done
done
if [[ "$part" != fa* ]]; then
one memcheck "(1000,1016,760) 128x256x64/256t/s3" -D M=1000 -D N=1016 -D K=760 -D block_M=128 -D block_N=256 \
  -D block_K=64 -D threads=256 "$k"
one memcheck "(1000,1016,760) gemm.py as written" -D M=1000 -D N=1016 -D K=760 examples/gemm.py
one memcheck "(503,1017,763) 128x256x64/256t/s3" -D M=503 -D N=1017 -D K=763 -D block_M=128 -D block_N=256 \
  -D block_K=64 -D threads=256 "$k"
cs_k=test/GPU/kernels/gemm_c_shared.py  # defaults: NT, 128x256x64, 3 stages, 256 threads, T.use_swizzle(10)
for epi in copy scale; do
  for sms in 3 0; do
    for tool in racecheck synccheck; do
      one "$tool" "C_shared $epi 512^3 --sms=$sms" --sms=$sms -D M=512 -D N=512 -D K=512 -D epilogue=$epi "$cs_k"
    done
  done
  one memcheck "C_shared $epi (1000,1016,760) --sms=3" --sms=3 -D M=1000 -D N=1016 -D K=760 -D epilogue=$epi "$cs_k"
done
fi
[[ "$part" == gemm ]] && finish
# FlashAttention's Hopper path (issue 19, acceptance 3): (1, 2, 512, 128), causal and not, 128x128 tiles,
# 2 stages, 256 threads; head dim 256 at 128x80 ((1, 2, 640, 256): whole tiles)
fa=examples/flash_attention.py
ov=--pass-config=tl.attention_overlap
if [[ "$part" != fa-persistent ]]; then
for causal in False True; do
  for tool in racecheck synccheck memcheck; do
    one "$tool" "FA (1,2,512,128) causal=$causal 128x128/256t/s2" -D batch=1 -D heads=2 -D seq_len=512 -D dim=128 \
      -D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256 -D is_causal=$causal "$fa"
  done
done
# the ping-pong schedule (pass config tl.attention_pingpong: named-barrier turns between the consumer
# warpgroups) and seq_len 1000 (partial tiles), causal and not
for causal in False True; do
  for tool in racecheck synccheck; do
    one "$tool" "FA ping-pong (1,2,512,128) causal=$causal" --pass-config=tl.attention_pingpong -D batch=1 \
      -D heads=2 -D seq_len=512 -D dim=128 -D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256 \
      -D is_causal=$causal "$fa"
  done
  one memcheck "FA (1,2,1000,128) causal=$causal 128x128/256t/s2" -D batch=1 -D heads=2 -D seq_len=1000 \
    -D dim=128 -D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256 -D is_causal=$causal "$fa"
done
# the overlap schedule (pass config tl.attention_overlap: each consumer's softmax under its own P·V, the K
# stage released after wgmma.wait_group 1, the V stage after wait_group 0), causal and not
for causal in False True; do
  for tool in racecheck synccheck; do
    one "$tool" "FA overlap (1,2,512,128) causal=$causal" $ov -D batch=1 -D heads=2 -D seq_len=512 -D dim=128 \
      -D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256 -D is_causal=$causal "$fa"
    one "$tool" "FA overlap (1,2,1000,64) causal=$causal" $ov -D batch=1 -D heads=2 -D seq_len=1000 -D dim=64 \
      -D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256 -D is_causal=$causal "$fa"
  done
  one memcheck "FA overlap (1,2,1000,128) causal=$causal" $ov -D batch=1 -D heads=2 -D seq_len=1000 -D dim=128 \
    -D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256 -D is_causal=$causal "$fa"
done
for tool in racecheck synccheck; do
  one "$tool" "FA (1,2,640,256) 128x80/256t/s2" -D batch=1 -D heads=2 -D seq_len=640 -D dim=256 -D block_M=128 \
    -D block_N=80 -D num_stages=2 -D threads=256 "$fa"
done
fi
# the persistent grid (pass config tl.attention_persistent), planned for 3 SMs so that each block runs
# several tiles (Q reloaded after the consumers free it; O_shared in its own bytes at dim 128, in Q's at 256)
ps=(--pass-config=tl.attention_persistent --sms=3)
for causal in False True; do
  for tool in racecheck synccheck; do
    one "$tool" "FA persistent (1,2,512,128) causal=$causal" "${ps[@]}" -D batch=1 -D heads=2 -D seq_len=512 \
      -D dim=128 -D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256 -D is_causal=$causal "$fa"
    one "$tool" "FA persistent+overlap (1,2,512,128) c=$causal" "${ps[@]}" $ov -D batch=1 -D heads=2 \
      -D seq_len=512 -D dim=128 -D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256 -D is_causal=$causal "$fa"
    one "$tool" "FA persistent (1,2,640,256) causal=$causal" "${ps[@]}" -D batch=1 -D heads=2 -D seq_len=640 \
      -D dim=256 -D block_M=128 -D block_N=80 -D num_stages=2 -D threads=256 -D is_causal=$causal "$fa"
  done
  one memcheck "FA persistent (1,2,1000,128) causal=$causal" "${ps[@]}" -D batch=1 -D heads=2 -D seq_len=1000 \
    -D dim=128 -D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256 -D is_causal=$causal "$fa"
done
finish
