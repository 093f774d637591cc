#!/bin/sh
# tl-opt with option B's optimisation pipeline (option-b.passes beside this
# file, through TL_LLVM_PASSES): for scripts/ptx-ab.sh make and
# scripts/ptx-quality.py --new.  TL_OPT selects the binary (default build/tl-opt).
d=$(cd "$(dirname "$0")" && pwd)
TL_LLVM_PASSES=$(cat "$d/option-b.passes") exec "${TL_OPT:-build/tl-opt}" "$@"
