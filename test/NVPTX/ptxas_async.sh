#!/usr/bin/env bash
# PTX validation of the named-barrier, mbarrier, bulk copy and proxy-fence
# intrinsics (lib/NVPTX/codegen_async.c) on the targets ptxas_examples.sh does
# not cover: the kernel using all of them (test/GPU/kernels/async_ring_all.py)
# for sm_90 (without the a: PTX 8.0 needs no arch-specific features), and the
# sm_80 subset (test/NVPTX/Inputs/mbarrier_sm80.py: named barriers, mbarrier
# init / arrive / test_wait.parity) for sm_86 and sm_89, each on its own
# -arch.  A missing ptxas is a failure, not a skip.
# Usage: ptxas_async.sh TL_OPT SOURCE_ROOT
set -uo pipefail
tlopt=$1
root=$2
ptxas=${TL_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [[ ! -x "$ptxas" ]]; then
  echo "FAIL: ptxas not found (install the CUDA toolkit or set TL_PTXAS)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checked=0 failed=0
while read -r file target; do
  name=$(basename "$file" .py)
  if ! "$tlopt" --emit=ptx --target="$target" "$root/$file" -o "$tmp/$name.ptx" 2>"$tmp/err"; then
    echo "FAIL  $name ($target): tl-opt --emit=ptx failed:"; cat "$tmp/err"; failed=$((failed + 1)); continue
  fi
  if "$ptxas" -arch="$target" "$tmp/$name.ptx" -o "$tmp/out.cubin" 2>"$tmp/perr"; then
    echo "ok    $name --target=$target ptxas -arch=$target"; checked=$((checked + 1))
  else
    echo "FAIL  $name --target=$target ptxas -arch=$target:"; cat "$tmp/perr"; failed=$((failed + 1))
  fi
done <<'LIST'
test/GPU/kernels/async_ring_all.py sm_90
test/GPU/kernels/async_ring_all.py sm_90a
test/NVPTX/Inputs/mbarrier_sm80.py sm_86
test/NVPTX/Inputs/mbarrier_sm80.py sm_89
test/NVPTX/Inputs/mbarrier_sm80.py sm_90a
LIST
echo "ptxas (async intrinsics): $checked passed, $failed failed"
[[ $failed -eq 0 && $checked -gt 0 ]]
