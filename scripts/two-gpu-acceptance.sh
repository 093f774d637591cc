#!/usr/bin/env bash
# Issue 18's acceptance ("kernels run where their tensors are; a data-parallel PyTorch job calls them on
# every rank") on the GPU host, from the bundle (build-device/, scripts/build-device.sh), outputs in $OUT:
#   two GPUs (the default; both visible, no CUDA_VISIBLE_DEVICES):
#     1. tl-run --device=cuda:1 --check (every element against the reference evaluator): the elementwise add,
#        examples/gemm.py (512^3, and (1000,1016,760) at the Hopper tile set) and FlashAttention
#        (1, 2, 512, 128, Hopper tiles), causal and not; --bench of the 4096^3 GEMM on cuda:0 and on cuda:1;
#        --device=cuda:2 refused naming the ordinal and the count (tl_run.txt);
#     2. bin/test_two_gpus with TL_TWO_GPU_REQUIRED=1: cuda:0 by ordinal, the mixed cuda:0/cuda:1 call
#        refused (real memory on both), two threads x 1,000 calls of one add and one GEMM object, one
#        device each, own streams, checked per device (test_two_gpus.txt);
#     3. python3 -m torch.distributed.run --standalone --nproc-per-node=2 examples/python/ddp_gemm.py:
#        each rank's GEMM and FlashAttention on cuda:LOCAL_RANK in steps that all-reduce with NCCL, checked
#        against PyTorch on each rank, per-rank TFLOP/s with both running and each alone (ddp.txt);
#   ONE_GPU=1 (what one GPU allows):
#     1. tl-run --device=cuda:0 --check of the same kernels (and the 4096^3 --bench); --device=cuda:1
#        refused ("no CUDA device 1 (this machine has 1 CUDA device: cuda:0)");
#     2. bin/test_two_gpus: its one-GPU parts must PASS, the two-thread part SKIPs (exit 77);
#     3. examples/python/ddp_gemm.py as world size 1 (NCCL, one rank), and the two-rank logic with both
#        ranks on cuda:0 (--one-device --backend=gloo: NCCL refuses two ranks on one GPU).
# A table of the steps comes last; exit 1 when one failed.  ONLY=REGEX runs the parts whose names (tlrun,
# ctest, ddp) match (bash =~), to split the run over several calls.
# Usage (repository root, after scripts/build-device.sh):
#   OUT=DIR scripts/two-gpu-acceptance.sh            # two GPUs
#   ONE_GPU=1 OUT=DIR scripts/two-gpu-acceptance.sh  # one GPU
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
: "${OUT:=$root/logs}"
mkdir -p "$OUT"
cd "$root/build-device" 2>/dev/null || cd "$root" || exit 2   # (the script also runs from inside the bundle)
[[ -x bin/tl-run ]] || { echo "two-gpu-acceptance: no bundle (bin/tl-run) at $PWD: run scripts/build-device.sh" >&2; exit 2; }
export TL_KERNEL_DIR=examples TL_CACHE=0 LD_LIBRARY_PATH=$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
one=${ONE_GPU:-0}
py=$(command -v python3 || true)
names=(); results=()
step() { names+=("$1"); results+=("$2"); echo "== $1: $2"; }
part() { [[ -z "${ONLY:-}" || "$1" =~ ${ONLY} ]]; }

{ nvidia-smi -L 2>&1; nvidia-smi --query-gpu=index,name,pci.bus_id,compute_cap --format=csv 2>&1; } \
  > "$OUT/devices.txt"
cat "$OUT/devices.txt"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [[ "$one" != 1 && "$ngpu" -lt 2 ]]; then
  echo "two-gpu-acceptance: $ngpu GPU(s) visible: the two-GPU acceptance needs 2 (ONE_GPU=1 runs the one-GPU part)"
  step "two GPUs visible" "FAIL ($ngpu)"
fi
dev=1; [[ "$one" == 1 ]] && dev=0

# 1. tl-run on device $dev, --check against the reference evaluator
big=(-D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=3)
fa=(-D batch=1 -D heads=2 -D seq_len=512 -D dim=128 -D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2)
tlrun() { # label, tl-run arguments...
  local label=$1; shift
  echo "-- $label: tl-run $*"
  local out rc
  out=$(timeout 300 bin/tl-run "$@" 2>&1); rc=$?
  echo "$out" | tail -6
  if [[ $rc -eq 0 ]] && grep -q "^check: PASS" <<<"$out"; then step "tl-run cuda:$dev $label" PASS
  else step "tl-run cuda:$dev $label" "FAIL (rc $rc)"; fi
}
part tlrun && {
  tlrun "add 1024x1024 --check" --device=cuda:$dev --check examples/elementwise_add.py
  tlrun "gemm 512^3 --check" --device=cuda:$dev --check -D M=512 -D N=512 -D K=512 examples/gemm.py
  tlrun "gemm (1000,1016,760) Hopper tiles --check" --device=cuda:$dev --check -D M=1000 -D N=1016 -D K=760 \
    "${big[@]}" examples/gemm.py
  for c in False True; do
    tlrun "flash-attention (1,2,512,128) causal=$c --check" --device=cuda:$dev --check "${fa[@]}" -D is_causal=$c \
      examples/flash_attention.py
  done
  for d in $(seq 0 $(( one == 1 ? 0 : 1 ))); do
    echo "-- bench gemm 4096^3 on cuda:$d"
    timeout 300 bin/tl-run --device=cuda:$d --bench -D M=4096 -D N=4096 -D K=4096 "${big[@]}" examples/gemm.py 2>&1 |
      grep -E "time_ms|error" | sed "s/^/cuda:$d: /"
  done
  bad=$(( one == 1 ? 1 : 2 ))
  want="no CUDA device $bad (this machine has $ngpu CUDA device"
  out=$(bin/tl-run --device=cuda:$bad examples/elementwise_add.py 2>&1); rc=$?
  echo "-- --device=cuda:$bad: rc $rc: $out"
  if [[ $rc -eq 1 ]] && grep -qF "$want" <<<"$out"; then step "tl-run --device=cuda:$bad refused" PASS
  else step "tl-run --device=cuda:$bad refused" "FAIL (rc $rc)"; fi
} > "$OUT/tl_run.txt" 2>&1
part tlrun && grep -E "^== |cuda:[01]: time_ms" "$OUT/tl_run.txt"

# 2. the C test
if ! part ctest; then :
elif [[ "$one" == 1 ]]; then
  timeout 600 bin/test_two_gpus > "$OUT/test_two_gpus.txt" 2>&1; rc=$?
  if [[ $rc -eq 77 ]] && grep -q "one-GPU parts PASS" "$OUT/test_two_gpus.txt"; then step "test_two_gpus (one-GPU parts; two-thread part skipped)" PASS
  else step "test_two_gpus (one-GPU parts)" "FAIL (rc $rc)"; fi
else
  TL_TWO_GPU_REQUIRED=1 timeout 600 bin/test_two_gpus > "$OUT/test_two_gpus.txt" 2>&1; rc=$?
  if [[ $rc -eq 0 ]]; then step "test_two_gpus (2 threads x 2 devices x 1000 calls)" PASS
  else step "test_two_gpus (2 threads x 2 devices x 1000 calls)" "FAIL (rc $rc)"; fi
fi
part ctest && cut -c1-300 "$OUT/test_two_gpus.txt"

# 3. the PyTorch job
ddp() { # label, log, command...
  local label=$1 log=$2; shift 2
  echo "-- $label: $*" > "$OUT/$log"
  timeout 400 "$@" >> "$OUT/$log" 2>&1; local rc=$?
  grep -E "^ddp_gemm: |^ +[0-9]+ +[0-9.]+ " "$OUT/$log" | cut -c1-400
  if [[ $rc -eq 0 ]] && grep -q "^ddp_gemm: PASS" "$OUT/$log"; then step "$label" PASS
  elif [[ $rc -eq 77 ]]; then step "$label" "SKIP ($(grep -m1 SKIP "$OUT/$log"))"
  else step "$label" "FAIL (rc $rc)"; tail -20 "$OUT/$log"; fi
}
if ! part ddp; then :
elif [[ -z "$py" ]] || ! "$py" -c "import torch, torch.distributed" 2>/dev/null; then
  step "ddp_gemm.py" "SKIP (no python3 with PyTorch)"
elif [[ "$one" == 1 ]]; then
  ddp "ddp_gemm.py, world size 1 (NCCL)" ddp_world1.txt "$py" examples/python/ddp_gemm.py
  ddp "ddp_gemm.py, 2 ranks on cuda:0 (gloo)" ddp_one_device.txt "$py" -m torch.distributed.run --standalone \
    --nproc-per-node=2 examples/python/ddp_gemm.py --one-device --backend=gloo --rounds 2 --reps 20
else
  ddp "torchrun --nproc-per-node=2 ddp_gemm.py (NCCL)" ddp.txt "$py" -m torch.distributed.run --standalone \
    --nproc-per-node=2 examples/python/ddp_gemm.py
  if grep -q "within 5% of itself alone: yes" "$OUT/ddp.txt"; then step "per-rank GEMM TFLOP/s within 5% of alone" PASS
  else step "per-rank GEMM TFLOP/s within 5% of alone" "FAIL (see ddp.txt)"; fi
fi

echo
echo "issue 18 acceptance ($([[ "$one" == 1 ]] && echo "ONE_GPU=1" || echo "two GPUs"), $ngpu GPU(s) visible; logs in $OUT)"
fail=0
for i in "${!names[@]}"; do
  printf '  %-62s %s\n' "${names[$i]}" "${results[$i]}"
  [[ "${results[$i]}" == FAIL* ]] && fail=1
done
exit $fail
