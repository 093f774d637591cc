#!/usr/bin/env bash
# FlashAttention's Hopper acceptance run on the GPU host (issue 19), from the repository root with the
# bundle in build-device/ (scripts/build-device.sh) and $OUT the output folder:
#   - benchmarks/attention/sdpa.py: ours (the default schedule) and its variants against SDPA's
#     FlashAttention-2 and cuDNN backends in one process, f16 and bf16, with the correctness cases
#     (sdpa.txt, bench_attention.csv);
#   - compute-sanitizer racecheck and synccheck of the default schedule at (1, 2, 512, 128), causal and
#     not (sanitize_default.txt);
#   - the mma.sync FlashAttention for --target=sm_80 on the GPU (fa_sm80.txt).
# Usage: OUT=DIR scripts/fa-acceptance.sh
set -uo pipefail
export TL_CACHE=0
: "${OUT:=$PWD/logs}"
mkdir -p "$OUT"
cd build-device || exit 2
export TL_KERNEL_DIR=examples LD_LIBRARY_PATH=$PWD/lib
(timeout 330 python3 benchmarks/attention/sdpa.py --rounds 15 --csv "$OUT/bench_attention.csv"; echo "rc=$?") \
  > "$OUT/sdpa.txt" 2>&1
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
fa=(-D batch=1 -D heads=2 -D seq_len=512 -D dim=128 -D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256)
for c in False True; do
  for tool in racecheck synccheck; do
    echo "== $tool default schedule (1,2,512,128) causal=$c"
    timeout 60 "$cs" --tool "$tool" bin/tl-run --device=cuda --check --remarks "${fa[@]}" -D is_causal=$c \
      examples/flash_attention.py 2>&1 | grep -E "SUMMARY|check:|Hopper path" | cut -c1-400
  done
done > "$OUT/sanitize_default.txt" 2>&1
for c in False True; do
  echo "== sm_80 (1,2,256,128) causal=$c"
  timeout 60 bin/tl-run --device=cuda --target=sm_80 --check --remarks -D batch=1 -D heads=2 -D seq_len=256 \
    -D dim=128 -D is_causal=$c examples/flash_attention.py 2>&1 | grep -E "check:|remark" | cut -c1-200
done > "$OUT/fa_sm80.txt" 2>&1
