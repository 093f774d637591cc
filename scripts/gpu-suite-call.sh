#!/usr/bin/env bash
# The device call that runs the bundle's GPU suite and the sanitizer on the GPU host, from files carried from
# the development machine:
#   build-gpu/build-device.tar.xz   (scripts/build-device.sh, then tar -cJf build-gpu/build-device.tar.xz build-device)
# Run on the device with carry ["build-gpu/build-device.tar.xz"]; logs under $OUT (gpu-logs/, suite.txt,
# sanitize-<part>.txt).  Env: SUITE_ONLY (TL_GPU_ONLY regex, default '^test_'), SUITE_TIMEOUT (s, default 430),
# SANITIZE_PARTS (space-separated SANITIZE_PART values of scripts/sanitize-hopper.sh, default "lang"),
# SANITIZE_TIMEOUT (s per part, default 140), SANITIZE_BESIDE=1 (the parts beside the suite, not after it).
set -u
cd "$(dirname "$0")/.." || exit 2
root=$PWD
out=${OUT:-$root/gpu-out}
mkdir -p "$out" /tmp/bundle && tar -xJf build-gpu/build-device.tar.xz -C /tmp/bundle
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
sanitize() {
  for part in ${SANITIZE_PARTS:-lang}; do
    SANITIZE_PART=$part timeout "${SANITIZE_TIMEOUT:-140}" "$root/scripts/sanitize-hopper.sh" /tmp/bundle/build-device \
      >"$out/sanitize-$part.txt" 2>&1
    echo "sanitize $part: exit $?" >>"$out/sanitize-status.txt"
  done
}
: >"$out/sanitize-status.txt"
# SANITIZE_BESIDE=1: the sanitizer parts run while the suite runs (correctness runs only; they share the GPU)
if [[ ${SANITIZE_BESIDE:-0} = 1 ]]; then sanitize & san_pid=$!; fi
TL_GPU_ONLY=${SUITE_ONLY:-^test_} timeout "${SUITE_TIMEOUT:-430}" /tmp/bundle/build-device/run-gpu.sh \
  >"$out/suite.txt" 2>&1
echo "suite: exit $?"
tail -40 "$out/suite.txt"
if [[ ${SANITIZE_BESIDE:-0} = 1 ]]; then wait "$san_pid"; else sanitize; fi
for part in ${SANITIZE_PARTS:-lang}; do cat "$out/sanitize-$part.txt"; done
cat "$out/sanitize-status.txt"
