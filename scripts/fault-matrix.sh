#!/usr/bin/env bash
# The fault matrix (issue 33; test/faults/fault_matrix.c): every CUDA driver entry point the runtime calls
# fails once (its first call and a later one) on the fake driver of benchmarks/launch, inside a scenario
# that uses all of them; each fault must be reported with the driver's error name and what it concerned,
# the same objects must work once the fault is gone, and nothing may leak (the fake driver's allocations,
# modules, context retains, events, pushed contexts; host memory under an ASan build's LeakSanitizer).
# Prints the cases and `faults: N injected, N reported, N recovered, 0 leaked, 0 lost`.
#   scripts/fault-matrix.sh [BUILD_DIR]     (default build; build-asan for the sanitizer build)
# Runs from the repository root (the scenario reads test kernels); ctest runs it as unit/fault_matrix.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/test/faults/fault_matrix
[ -x "$bin" ] || { echo "fault-matrix: $bin not built (cmake --build $build --target fault_matrix)" >&2; exit 2; }
export TL_CACHE=0
out=$("$bin" "${@:2}") && rc=0 || rc=$?
printf '%s\n' "$out"
summary=$(printf '%s\n' "$out" | grep '^faults: ' || true)
[ -n "$summary" ] || { echo "fault-matrix: no summary line (exit $rc)" >&2; exit 1; }
read -r _ inj _ rep _ rec _ leak _ lost _ <<<"$(printf '%s' "$summary" | tr -d ',')"
if [ "$rc" -ne 0 ] || [ "$inj" != "$rep" ] || [ "$rep" != "$rec" ] || [ "$leak" != 0 ] || [ "$lost" != 0 ]; then
  echo "fault-matrix: FAILED (exit $rc): $summary" >&2
  exit 1
fi
