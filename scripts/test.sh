#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#   1. a normal build with -DTL_WERROR=ON: unit tests, lit/FileCheck tests, ptxas checks of the PTX; the
#      fault matrix (scripts/fault-matrix.sh: every driver entry point failing on the fake driver); the
#      kernel cache under crashes and concurrency (test/faults/cache_stress.c, 8 processes x 4 threads,
#      random SIGKILLs, 60 s);
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build running the same suite (the fault matrix
#      under LeakSanitizer, the cache stress for 20 s);
#   3. a ThreadSanitizer build running two threads that compile different
#      kernels THREAD_ITERATIONS (default 200) times each in one process;
#   4. install into a temporary prefix and the out-of-tree C example built with find_package and with
#      pkg-config (scripts/test-install.sh); the Python package's pytest suite (python/tests) on the
#      CPU executor, from a venv under build-test/; the wheel (scripts/build-wheel.sh --offline: LLVM
#      linked statically, build-wheel-cmake/) installed into a fresh venv running a kernel on the CPU;
#   5. a libFuzzer build (clang-19) running the round-trip fuzzer for
#      FUZZ_SECONDS (default 30) on the seed corpus; the mutation fuzzer
#      (test/fuzz/mutate.py) over the examples and test kernels for
#      MUTATE_SECONDS (default 120) with the ASan+UBSan build's tl-opt and
#      tl-run (seed MUTATE_SEED, default 1, and libFuzzer's FUZZ_SEED, default
#      1: CI's runs are reproducible smoke runs, the exploratory runs use other
#      seeds; kept inputs in build-fuzz/mutate-kept/).  The mutation step fails
#      on crashes (signals, sanitizer reports) and hangs; the other kept
#      classes (check-fail, unlocated) are listed for triage, not fatal (their
#      count depends on how far a loaded machine gets in the time; with seed 1
#      it keeps none within 120 s since the issue-15 fixes of the versioning,
#      strided-stride, atomic-index and fa_rs_gemm findings).
# Build directories: build-test/, build-asan/, build-tsan/, build-fuzz/ (JOBS=N to set parallelism).
# First of all, scripts/check-size.sh: file and function sizes of lib/ and tools/.
set -euo pipefail
export TL_CACHE=${TL_CACHE:-0}  # compiles are real and the user's kernel cache stays untouched
cd "$(dirname "$0")/.."

JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
MUTATE_SECONDS=${MUTATE_SECONDS:-120}
MUTATE_SEED=${MUTATE_SEED:-1}
export FUZZ_SEED=${FUZZ_SEED:-1}
THREAD_ITERATIONS=${THREAD_ITERATIONS:-200}
step() { printf '\n========== %s ==========\n' "$*"; }

step "size check (files <= 1500 lines, functions <= 150 lines)"
scripts/check-size.sh

step "format check (clang-format 14, .clang-format)"
scripts/check-format.sh

step "build (gcc, -DTL_WERROR=ON)"
cmake -S . -B build-test -DTL_WERROR=ON
cmake --build build-test -j "$JOBS"

step "unit tests (Criterion)"
ctest --test-dir build-test -L unit --output-on-failure -j "$JOBS"

step "fault matrix (driver faults on the fake driver)"
scripts/fault-matrix.sh build-test | tail -2

step "kernel cache under crashes and concurrency (8 processes x 4 threads, random SIGKILLs, 60 s)"
ctest --test-dir build-test -L stress --output-on-failure -V

step "FileCheck tests (lit)"
ctest --test-dir build-test -L lit --output-on-failure -V

step "PTX validation (ptxas sm_80 / sm_90a of every lowered example)"
ctest --test-dir build-test -L ptxas --output-on-failure -V

step "CPU SIMT executor vs reference evaluator (every lowered example)"
ctest --test-dir build-test -L interp --output-on-failure -V -j "$JOBS"

step "install for C users: temporary prefix, out-of-tree example (find_package and pkg-config)"
scripts/test-install.sh build-test

step "Python package: pip install into a venv, pytest (NumPy, CPU executor), examples/python"
scripts/test-python.sh build-test

step "Python wheel: scripts/build-wheel.sh (libtilelang with static LLVM inside), pip install into a fresh venv, a kernel on the CPU"
scripts/build-wheel.sh --offline -j "$JOBS"

step "sanitizer build (ASan + UBSan)"
cmake -S . -B build-asan -DTL_WERROR=ON -DTL_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
cmake --build build-asan -j "$JOBS"

step "sanitizer build: unit tests + lit tests (+ the fault matrix under LeakSanitizer, the cache stress for 20 s)"
ctest --test-dir build-asan --output-on-failure -j "$JOBS"
ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 scripts/fault-matrix.sh build-asan | tail -2

step "ThreadSanitizer build: concurrent compilation (${THREAD_ITERATIONS} per thread)"
cmake -S . -B build-tsan -DTL_WERROR=ON -DTL_SANITIZE_THREAD=ON -DTL_THREAD_ITERATIONS="$THREAD_ITERATIONS"
cmake --build build-tsan -j "$JOBS" --target compile_threads
ctest --test-dir build-tsan -L threads --output-on-failure -V

step "fuzz build (clang-19, libFuzzer + ASan + UBSan)"
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DTL_FUZZ=ON -DTL_BUILD_TESTS=OFF -DTL_FUZZ_SECONDS="$FUZZ_SECONDS"
cmake --build build-fuzz -j "$JOBS" --target fuzz_roundtrip

step "fuzz run (${FUZZ_SECONDS} s)"
ctest --test-dir build-fuzz -L fuzz --output-on-failure -V

step "mutation fuzzer (ASan+UBSan tl-opt and tl-run, ${MUTATE_SECONDS} s, seed ${MUTATE_SEED})"
rm -rf build-fuzz/mutate-kept
ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  python3 test/fuzz/mutate.py --tl-opt build-asan/tl-opt --tl-run build-asan/tl-run \
  --seconds "$MUTATE_SECONDS" --seed "$MUTATE_SEED" --opt-budget 20 --keep build-fuzz/mutate-kept \
  --fail-on crash,hang

step "all test steps passed"
