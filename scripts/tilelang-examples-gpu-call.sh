#!/usr/bin/env bash
# The device call that runs TileLang's example programs on the GPU host under this project (and, with
# WITH_TL=1, under the real TileLang in the same call), from files carried from the development machine:
#   dist/*.whl                          (scripts/build-wheel.sh --offline --lib build-device/lib/libtilelang.so.0)
#     or, smaller (xz instead of the wheel's deflate: 11 MB instead of 16 when the 64 MiB carry is tight),
#   build-gpu/wheel.tar.xz + WHEEL_NAME (the wheel's files, `python3 -m zipfile -e dist/W.whl D; tar -cJf ... -C D .`:
#                                        zipped back into dist/WHEEL_NAME here)
#   build-gpu/tl-examples.tar.xz        (git -C <tilelang mirror> archive a35008a42 examples | xz: examples/)
#   build-gpu/tilelang-site.tar.xz      (WITH_TL=1 only: docs/testing.md "TileLang beside us")
# Run on the device with carry ["dist", "build-gpu/tl-examples.tar.xz", "build-gpu/tilelang-site.tar.xz",
# "scripts/tilelang-examples-gpu-call.sh"]; results under $OUT/acc (examples-*.jsonl, examples-table.md).
# Env: EXAMPLE_JOBS (default 8), EXAMPLE_TIMEOUT (s per file, default 90), EXAMPLES_ONLY (regex), SECTIONS (default C).
set -u
cd "$(dirname "$0")/.."
if [[ -f build-gpu/wheel.tar.xz && -n "${WHEEL_NAME:-}" ]] && ! ls dist/*.whl >/dev/null 2>&1; then
  rm -rf /tmp/whl && mkdir -p /tmp/whl dist && tar -xJf build-gpu/wheel.tar.xz -C /tmp/whl &&
    (cd /tmp/whl && python3 -m zipfile -c "$OLDPWD/dist/$WHEEL_NAME" ./*)
fi
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
