#!/usr/bin/env bash
# TileLang users' door, on the GPU host (no network there):
#   A. a fresh venv (system site-packages for PyTorch only; no PYTHONPATH, no TL_LIBRARY), `pip install` of
#      the one wheel of scripts/build-wheel.sh, then TileLang's original JIT GEMM test with PyTorch
#      (examples/python/gemm.py) and `python -m tilelang_ptx` on TileLang's examples/gemm/example_gemm.py;
#   B. the autotuner on TileLang's example_gemm_autotune.py (scripts/tilelang-autotune-acceptance.py; AUTOTUNE_ROUNDS
#      timing rounds of every configuration, default 3: about 90 s each for its 288 on an H100);
#   A2. (with TILELANG_SITE_DIR) the real TileLang imported first in one process, then load_file and
#      python -m tilelang_ptx on example_gemm.py: the kernels are this project's (type, PTX);
#   C. all of TileLang's example programs, each by `python -m tilelang_ptx FILE` and, when a TileLang
#      site is given, under the real TileLang in the same call (scripts/run-tilelang-examples.py).
#   scripts/tilelang-host-acceptance.sh WHEEL TILELANG_EXAMPLES_DIR [TILELANG_SITE_DIR] [OUT_DIR]
# TILELANG_SITE_DIR: TileLang 0.1.15 unpacked from the peer tarball (CUDA_HOME is set to /usr/local/cuda).
# OUT_DIR (default ./tilelang-host-acceptance): examples.jsonl and the logs.  Exit 77 without a GPU.
# SECTIONS="A B C" (the default: all) runs some of them; EXAMPLES_ONLY=REGEX (run-tilelang-examples.py
# --only) runs part of C, e.g. EXAMPLES_ONLY='/[a-f][^/]*/' then '/[g-z][^/]*/' (results go to examples-*.jsonl
# named after the regex's hash, the table covers all of them).
set -uo pipefail
whl=$(realpath "${1:?usage: tilelang-host-acceptance.sh WHEEL EXAMPLES_DIR [SITE_DIR] [OUT_DIR]}")
examples=$(realpath "${2:?usage: tilelang-host-acceptance.sh WHEEL EXAMPLES_DIR [SITE_DIR] [OUT_DIR]}")
site=${3:-}
out=$(mkdir -p "${4:-tilelang-host-acceptance}" && realpath "${4:-tilelang-host-acceptance}")
root=$(cd "$(dirname "$0")/.." && pwd)
py=$(command -v python3)
"$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
  { echo "tilelang-host-acceptance: SKIP: needs PyTorch with a CUDA GPU"; exit 77; }
fails=0
sections=${SECTIONS:-A B C}
only=${EXAMPLES_ONLY:-}
tag=$( [[ -n $only ]] && printf '%s' "$only" | md5sum | cut -c1-8 || echo all)
venv=$out/venv
rm -rf "$venv"
"$py" -m venv --system-site-packages "$venv"
# PyTorch and NumPy as the host's python3 finds them (on the GPU host through PYTHONPATH or a user site,
# which a venv does not see even with --system-site-packages): their folders go into the venv by a .pth
# file, so that the one package pip installs is the wheel.
purelib=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$py" -c 'import os, torch, numpy
for m in (torch, numpy): print(os.path.dirname(os.path.dirname(os.path.realpath(m.__file__))))' |
  sort -u > "$purelib/host_torch.pth" || exit 1
"$venv/bin/python" -m pip install -q --no-deps --no-index "$whl" || exit 1
clean_env=(env -u PYTHONPATH -u TL_LIBRARY TL_CACHE=0)
work=$(mktemp -d)   # outside the checkout: only the installed wheel is importable
cp "$root/examples/python/gemm.py" "$work/"
if [[ $sections == *A* ]]; then
echo "== A. wheel: $(basename "$whl")"
(cd "$work" && "${clean_env[@]}" "$venv/bin/python" gemm.py) || fails=$((fails + 1))
(cd "$examples/gemm" && "${clean_env[@]}" "$venv/bin/python" -m tilelang_ptx example_gemm.py > "$out/example_gemm.log" 2>&1)
rc=$?
grep -E 'All check passed|Latency' "$out/example_gemm.log"
if [[ $rc -eq 0 ]]; then echo "example_gemm.py (python -m tilelang_ptx): PASS"
else echo "example_gemm.py (python -m tilelang_ptx): FAIL (exit $rc, $out/example_gemm.log)"; tail -3 "$out/example_gemm.log"; fails=$((fails + 1)); fi

if [[ -n $site ]]; then
  echo "== A2. the real TileLang imported first, then load_file and python -m tilelang_ptx: this project compiles"
  code='import sys, tilelang, tilelang_ptx
assert "tilelang_ptx" not in tilelang.__file__, tilelang.__file__
k = tilelang_ptx.load_file(sys.argv[1]).matmul.compile(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32)
assert type(k).__module__ == "tilelang_ptx.kernel" and ".entry" in k.get_kernel_source(), type(k)
assert sys.modules["tilelang"] is tilelang
print("real TileLang first: load_file PASS", type(k).__module__, flush=True)
import runpy; sys.argv = ["tilelang_ptx", sys.argv[1]]
try:
    runpy.run_module("tilelang_ptx", run_name="__main__")
except SystemExit as e:
    if e.code not in (None, 0): raise
print("real TileLang first: python -m tilelang_ptx PASS")'
  (cd "$examples/gemm" && PYTHONPATH=$(realpath "$site") CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} TL_CACHE=0 \
     "$venv/bin/python" -c "$code" "$examples/gemm/example_gemm.py" > "$out/real-first.log" 2>&1) ||
    { fails=$((fails + 1)); echo "real TileLang first: FAIL ($out/real-first.log)"; tail -3 "$out/real-first.log"; }
  grep 'PASS' "$out/real-first.log"
fi
fi

if [[ $sections == *B* ]]; then
echo "== B. autotuner: example_gemm_autotune.py"
(cd "$work" && env -u PYTHONPATH -u TL_LIBRARY "$venv/bin/python" "$root/scripts/tilelang-autotune-acceptance.py" \
   "$examples" --rounds "${AUTOTUNE_ROUNDS:-3}") 2> "$out/autotune.log" || fails=$((fails + 1))
grep -E '^tune: compiled' "$out/autotune.log" | tail -1
fi

if [[ $sections == *C* ]]; then
echo "== C. TileLang's example programs${only:+ matching $only}"
# One mode after the other (ours, then TileLang), EXAMPLE_JOBS files at a time each (default 8 on a 16-core
# host): run together, the two share one GPU's memory and TileLang's examples ran out of it (2026-12-06).
# EXAMPLE_TIMEOUT (seconds per file, default 300) bounds a slow one.
tmo=${EXAMPLE_TIMEOUT:-300}
jobs=${EXAMPLE_JOBS:-8}
(cd "$work" && env -u PYTHONPATH -u TL_LIBRARY TL_CACHE=0 "$venv/bin/python" "$root/scripts/run-tilelang-examples.py" \
   --mode ours-run --jobs "$jobs" --timeout "$tmo" --only "$only" "$examples" "$out/examples-ours-$tag.jsonl") \
   > "$out/examples-ours-$tag.log" 2>&1
echo "ours-run done at $SECONDS s"
if [[ -n $site ]]; then
  (cd "$work" && PYTHONPATH=$(realpath "$site") CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} "$py" \
     "$root/scripts/run-tilelang-examples.py" --mode tilelang-run --jobs "$jobs" --timeout "$tmo" --only "$only" "$examples" \
     "$out/examples-tilelang-$tag.jsonl") > "$out/examples-tilelang-$tag.log" 2>&1
  echo "tilelang-run done at $SECONDS s"
fi
tail -8 "$out/examples-ours-$tag.log"
[[ -n $site ]] && tail -6 "$out/examples-tilelang-$tag.log"
cat "$out"/examples-ours-*.jsonl > "$out/examples-ours.jsonl"
[[ -n $site ]] && cat "$out"/examples-tilelang-*.jsonl > "$out/examples-tilelang.jsonl"
runs=("$out/examples-ours.jsonl")
[[ -f $out/examples-tilelang.jsonl ]] && runs+=("$out/examples-tilelang.jsonl")
"$py" "$root/scripts/run-tilelang-examples.py" --table "${runs[@]}" > "$out/examples-table.md"
echo "table of every example so far: $out/examples-table.md"
missing=$(grep -c '"kind": "missing-name"' "$out/examples-ours.jsonl" || true)
echo "examples failing on a missing host-side name of this package: $missing"
[[ $missing -eq 0 ]] || fails=$((fails + 1))
fi
rm -rf "$work"
echo "tilelang-host-acceptance: $fails failure(s); results in $out"
exit $((fails > 0))
