#!/bin/sh
# Regenerates the layout pictures of docs/layouts.md ("Seeing the layouts") in docs/images/: one SVG
# per fragment and shared buffer of examples/gemm.py and examples/flash_attention.py, as
# `tl-opt --dump-layouts=svg` draws them for sm_80 at the examples' default parameters.
# Usage: scripts/layout-images.sh [BUILD_DIR]   (default: build)
set -eu
cd "$(dirname "$0")/.."
tlopt="${1:-build}/tl-opt"
mkdir -p docs/images
for ex in gemm flash_attention; do
  rm -rf "docs/images/$ex"
  "$tlopt" --target=sm_80 --dump-layouts=svg -o "docs/images/$ex" "examples/$ex.py" > /dev/null
done
ls docs/images/gemm docs/images/flash_attention
