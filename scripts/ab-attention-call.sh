#!/usr/bin/env bash
# The device call for two attention changes waiting on GPU timing (issue 31), then the GPU suite with the
# sanitizer beside it (scripts/gpu-suite-call.sh), from files carried from the development machine:
#   build-gpu/build-device.tar.xz        (main's bundle: scripts/build-device.sh; tar -cJf ... build-device)
#   build-gpu/build-device-m128.tar.xz   (branch s12-m128's bundle, the same way, from its worktree)
#   build-gpu/tl-examples.tar.xz         (TileLang's examples/ at a35008a42)
# scripts/ab-bundles.sh, each kernel AB_ROUNDS times a side (default 3):
#   1. main vs s12-m128 (block_M = R x 64 x warpgroups on the Hopper attention path): examples/flash_attention.py
#      as written (128x64 on 128 threads, dim 128) and TileLang's example_mha_fwd_bshd kernel at its main()
#      configuration (batch 8, 32 heads, 4096, dim 128, 128x128, 1 stage, 128 threads);
#   2. s12-m128 (which lacks it) vs main: mixed wgmma / mma.sync T.gemm (gemm-wgmma) on TileLang's
#      example_gqa_bwd main kernel at its main() sizes.
# Then SUITE_ONLY (default the language and GEMM/attention tests) with SANITIZE_PARTS (default "lang forms")
# beside it, SUITE_TIMEOUT / SANITIZE_TIMEOUT seconds.  Output: $OUT/ab.txt and gpu-suite-call.sh's files.
set -u
cd "$(dirname "$0")/.." || exit 2
mkdir -p /tmp/m128 /tmp/bundle /tmp/tlx
tar -xJf build-gpu/build-device-m128.tar.xz -C /tmp/m128 && tar -xJf build-gpu/build-device.tar.xz -C /tmp/bundle &&
  tar -xJf build-gpu/tl-examples.tar.xz -C /tmp/tlx || exit 2
B=/tmp/bundle/build-device M=/tmp/m128/build-device X=/tmp/tlx/examples R=${AB_ROUNDS:-3}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
{
  echo "== m128: old = main, new = s12-m128: examples/flash_attention.py as written"
  timeout 45 scripts/ab-bundles.sh "$B" "$M" "$R" examples/flash_attention.py
  echo "== m128: TileLang's example_mha_fwd_bshd kernel, main() configuration"
  timeout 45 scripts/ab-bundles.sh "$B" "$M" "$R" --kernel=flashattn -D batch=8 -D heads=32 -D seq_len=4096 -D dim=128 \
    -D is_causal=False -D block_M=128 -D block_N=128 -D num_stages=1 -D threads=128 \
    "$X/flash_attention/example_mha_fwd_bshd.py"
  echo "== mixed gemm-wgmma: old = s12-m128 (without), new = main: TileLang's example_gqa_bwd main kernel"
  timeout 45 scripts/ab-bundles.sh "$M" "$B" "$R" --kernel=flashattn_bwd_atomic_add -D batch=8 -D heads=32 \
    -D seq_len=1024 -D dim_qk=192 -D dim_v=128 -D is_causal=False -D block_M=128 -D block_N=32 -D threads=256 \
    -D num_stages=2 -D groups=16 "$X/flash_attention/example_gqa_bwd.py"
} 2>&1 | tee "${OUT:-.}/ab.txt"
suite_s=${SUITE_TIMEOUT:-400}
SUITE_ONLY=${SUITE_ONLY:-'^test_(lang_ops|gemm|mma_types|flash_attention|attention_hopper|issue14_forms)$'} \
  SANITIZE_BESIDE=1 SANITIZE_JOBS=${SANITIZE_JOBS:-8} SANITIZE_PARTS="${SANITIZE_PARTS:-lang forms}" \
  SANITIZE_TIMEOUT=${SANITIZE_TIMEOUT:-200} SANITIZE_RUN_TIMEOUT=${SANITIZE_RUN_TIMEOUT:-120} \
  SUITE_TIMEOUT=$suite_s timeout $((suite_s + 15)) scripts/gpu-suite-call.sh
