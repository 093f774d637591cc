#!/usr/bin/env bash
# The device call for an attention change waiting on GPU timing (issue 31), then the GPU suite with the
# sanitizer beside it (scripts/gpu-suite-call.sh), from files carried from the development machine:
#   build-gpu/build-device.tar.xz       (main's bundle: scripts/build-device.sh; tar -cJf ... build-device)
#   build-gpu/build-device-old.tar.xz   (the bundle of 67a9381, the commit before the change, built the same way
#                                         from a git worktree of it)
#   build-gpu/tl-examples.tar.xz        (TileLang's examples/ at a35008a42)
# scripts/ab-bundles.sh, each kernel AB_ROUNDS times a side (default 3), old = 67a9381, new = main: an attention
# loop whose block_M is 64 x more warpgroups than the kernel's threads give runs on more consumer warpgroups
# (docs/hopper.md "More consumer threads than the kernel asks for"; before: cp.async + mma.sync with spills):
# examples/flash_attention.py as written (128x64 on 128 threads, dim 128) and TileLang's example_mha_fwd_bshd
# kernel at its main() configuration (batch 8, 32 heads, 4096, dim 128, 128x128, 1 stage, 128 threads), causal
# and not.  Then SUITE_ONLY (default the language, graph-capture, int4 and GEMM/attention tests) with
# SANITIZE_PARTS (default "lang forms") beside it, SUITE_TIMEOUT / SANITIZE_TIMEOUT seconds.  Output: $OUT/ab.txt
# and gpu-suite-call.sh's files.
set -u
cd "$(dirname "$0")/.." || exit 2
mkdir -p /tmp/old /tmp/bundle /tmp/tlx
tar -xJf build-gpu/build-device-old.tar.xz -C /tmp/old && tar -xJf build-gpu/build-device.tar.xz -C /tmp/bundle &&
  tar -xJf build-gpu/tl-examples.tar.xz -C /tmp/tlx || exit 2
B=/tmp/bundle/build-device O=/tmp/old/build-device X=/tmp/tlx/examples R=${AB_ROUNDS:-3}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
{
  for c in False True; do
    echo "== widen: old = 67a9381, new = main: examples/flash_attention.py as written, is_causal=$c"
    timeout 60 scripts/ab-bundles.sh "$O" "$B" "$R" -D is_causal=$c examples/flash_attention.py
    echo "== widen: TileLang's example_mha_fwd_bshd kernel, main() configuration, is_causal=$c"
    timeout 90 scripts/ab-bundles.sh "$O" "$B" "$R" --kernel=flashattn -D batch=8 -D heads=32 -D seq_len=4096 \
      -D dim=128 -D is_causal=$c -D block_M=128 -D block_N=128 -D num_stages=1 -D threads=128 \
      "$X/flash_attention/example_mha_fwd_bshd.py"
  done
} 2>&1 | tee "${OUT:-.}/ab.txt"
suite_s=${SUITE_TIMEOUT:-400}
SUITE_ONLY=${SUITE_ONLY:-'^test_(lang_ops|graph_capture|int4_gemm|gemm|flash_attention|attention_hopper|issue14_forms)$'} \
  SANITIZE_BESIDE=1 SANITIZE_JOBS=${SANITIZE_JOBS:-8} SANITIZE_PARTS="${SANITIZE_PARTS:-lang forms}" \
  SANITIZE_TIMEOUT=${SANITIZE_TIMEOUT:-200} SANITIZE_RUN_TIMEOUT=${SANITIZE_RUN_TIMEOUT:-120} \
  SUITE_TIMEOUT=$suite_s timeout $((suite_s + 15)) scripts/gpu-suite-call.sh
