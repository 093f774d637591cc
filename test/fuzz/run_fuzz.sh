#!/usr/bin/env bash
# Fuzz smoke run: builds a seed corpus from every examples/*.py and
# test/IR/**/*.py, runs the libFuzzer target for SECONDS, and prints
# libFuzzer's statistics (executions, coverage).  Fails when the fuzzer finds
# a crash, leak, sanitizer report or round-trip mismatch.
#   usage: run_fuzz.sh FUZZER SOURCE_ROOT [SECONDS] [WORKDIR]
set -euo pipefail
fuzzer=$1
src=$2
secs=${3:-30}
work=${4:-$(mktemp -d)}

rm -rf "$work"
mkdir -p "$work/seed" "$work/corpus" "$work/artifacts"
n=0
while IFS= read -r -d '' f; do
  rel=${f#"$src"/}
  cp "$f" "$work/seed/${rel//\//__}"
  n=$((n + 1))
done < <(find "$src/examples" -maxdepth 1 -name '*.py' -print0 2>/dev/null;
         find "$src/test/IR" -name '*.py' -print0 2>/dev/null)
echo "fuzz: seed corpus of $n files; running $fuzzer for $secs s"

status=0
# FUZZ_SEED (scripts/test.sh sets 1 for CI): the same mutations in the same order each run
"$fuzzer" -max_total_time="$secs" -seed="${FUZZ_SEED:-0}" -max_len=65536 -timeout=20 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$work/corpus" "$work/seed" >"$work/log" 2>&1 || status=$?

# libFuzzer's progress and final stats lines: "#N INITED/pulse/DONE cov: ..."
# and "stat::number_of_executed_units: N".
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::' "$work/log" || true
grep -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' "$work/log" | tail -n 5 || true
if [ "$status" -ne 0 ]; then
  echo "fuzz: FAILED (exit $status); log tail:"
  tail -n 60 "$work/log"
  ls -l "$work/artifacts"
  exit 1
fi
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
cov=$(grep -oE 'cov: [0-9]+' "$work/log" | tail -n 1)
echo "fuzz: PASS: ${execs:-?} executions in $secs s, ${cov:-cov: ?}"
