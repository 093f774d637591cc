#!/usr/bin/env bash
# The device call that runs TileLang's example programs on the GPU host under this project (and, with
# WITH_TL=1, under the real TileLang in the same call), from files carried from the development machine:
#   dist/*.whl                          (scripts/build-wheel.sh --offline --lib build-device/lib/libtilelang.so.0)
#   build-gpu/tl-examples.tar.xz        (git -C <tilelang mirror> archive a35008a42 examples | xz: examples/)
#   build-gpu/tilelang-site.tar.xz      (WITH_TL=1 only: ../shared/peer/make-tilelang-site.sh)
# Run on the device with carry ["dist", "build-gpu/tl-examples.tar.xz", "build-gpu/tilelang-site.tar.xz",
# "scripts/tilelang-examples-gpu-call.sh"]; results under $OUT/acc (examples-*.jsonl, examples-table.md).
# Env: EXAMPLE_JOBS (default 8), EXAMPLE_TIMEOUT (s per file, default 90), EXAMPLES_ONLY (regex), SECTIONS (default C).
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/tlx && tar -xJf build-gpu/tl-examples.tar.xz -C /tmp/tlx
site=""
if [[ ${WITH_TL:-0} = 1 && -f build-gpu/tilelang-site.tar.xz ]]; then
  mkdir -p /tmp/site && tar -xJf build-gpu/tilelang-site.tar.xz -C /tmp/site
  site=/tmp/site
fi
nvidia-smi --query-gpu=name --format=csv,noheader
SECTIONS=${SECTIONS:-C} EXAMPLE_TIMEOUT=${EXAMPLE_TIMEOUT:-90} EXAMPLE_JOBS=${EXAMPLE_JOBS:-8} \
  EXAMPLES_ONLY=${EXAMPLES_ONLY:-} scripts/tilelang-host-acceptance.sh dist/*.whl /tmp/tlx/examples "$site" \
  "${OUT:-.}/acc" 2>&1 | tail -30
