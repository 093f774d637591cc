#!/usr/bin/env bash
# Issue 4, point 1 (CI part): every example kernel that lowers runs on the CPU
# SIMT executor at a small size and matches the tile-level reference evaluator
# element by element (`tl-run --device=cpu --check`, docs/testing.md "Numeric checks" tolerances).
# Examples whose lowering is not written yet are listed and skipped; an
# example missing from the table below fails the test (so new examples get a
# small-size entry).
# Usage: check_examples.sh TL_RUN EXAMPLES_DIR
set -uo pipefail
tlrun=$1
dir=$2
declare -A args=(
  [gemm]="-D M=128 -D N=128 -D K=64"
  [gemm_bf16_nt]="-D M=128 -D N=256 -D K=64"
  [gemm_dynamic_m]="-D N=128 -D K=64 --dim m=1,17,100"
  [gemm_splitk]="-D M=128 -D N=128 -D K=256 -D split_k=2 -D block_K=32"
  [elementwise_add]="-D M=100 -D N=130"
  [elementwise_add_1d]="--dim n=1000,1024"
  [elementwise_fma_row]="-D M=100 -D N=130"
  [silu]="--dim n=1000"
  [softmax]="-D M=8 -D N=256"
  [rms_norm]="-D M=8 -D N=256"
  [gemv]="-D N=256 -D K=128"
  [cast_copy]="-D M=100 -D N=130"
  [flash_attention]="-D batch=1 -D heads=2 -D seq_len=128 -D dim=64 -D block_M=64 -D block_N=32"
  [flash_attention_gqa]="-D batch=1 -D heads=4 -D kv_heads=2 -D seq_len=128 -D dim=64 -D block_M=64 -D block_N=32 -D threads=128"
  [saxpy]="-D N=1000 -D block=128 --arg alpha=1.5"
  [convolution]="-D N=2 -D C=32 -D H=8 -D W=8 -D F=64"
  [dequant_gemm]="-D M=128 -D N=128 -D K=128"
)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 skip=0 fail=0
for f in "$dir"/*.py; do
  name=$(basename "$f" .py)
  if [[ -z "${args[$name]+x}" ]]; then
    echo "FAIL  $name: no small-size entry in $0"; fail=$((fail + 1)); continue
  fi
  # shellcheck disable=SC2086
  "$tlrun" --device=cpu --check ${args[$name]} "$f" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [[ $rc -ne 0 ]] && grep -q "is not lowered yet" "$tmp/err"; then
    echo "skip  $name (not lowered yet)"; skip=$((skip + 1)); continue
  fi
  if [[ $rc -eq 0 ]] && grep -q "check: PASS" "$tmp/out" && ! grep -q "check: FAIL" "$tmp/out"; then
    echo "ok    $name ${args[$name]}: $(grep -c 'check: PASS' "$tmp/out") check(s) passed"; pass=$((pass + 1))
  else
    echo "FAIL  $name (exit $rc):"; cat "$tmp/out" "$tmp/err" | head -20; fail=$((fail + 1))
  fi
done
echo "SIMT executor vs reference evaluator: $pass examples pass, $fail fail, $skip not lowered yet"
[[ $fail -eq 0 && $pass -gt 0 ]]
