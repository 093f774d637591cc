#!/usr/bin/env bash
# Builds examples/c-consumer with pkg-config against an installed libtilelang
# and runs it:  examples/c-consumer/build-pkgconfig.sh <install prefix> <output dir>
set -euo pipefail
prefix=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
pc=$(find "$prefix" -name tilelang.pc -path '*pkgconfig*' | head -1)
export PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
libdir=$(pkg-config --variable=libdir tilelang)
mkdir -p "$out"
# shellcheck disable=SC2046  # word splitting of pkg-config's flags is intended
${CC:-cc} -std=c17 -Wall -Wextra -Werror -DKERNEL_FILE="\"$here/elementwise.py\"" \
  "$here/saxpy_cpu.c" -o "$out/saxpy_cpu" $(pkg-config --cflags --libs tilelang) -lm -Wl,-rpath,"$libdir"
"$out/saxpy_cpu"
