#!/usr/bin/env bash
# CI step "install": installs a build into a temporary prefix, moves the
# prefix (the install must be relocatable), then builds the out-of-tree C
# example examples/c-consumer against it twice -- with find_package(tilelang)
# and with pkg-config -- and runs both on the CPU executor.
#   scripts/test-install.sh [BUILD_DIR]     (default build; it must be built)
# Prints "install: PASS (cmake, pkg-config)" at the end; exit 1 on a failure.
set -euo pipefail
export TL_CACHE=${TL_CACHE:-0}  # compiles are real and the user's kernel cache stays untouched
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
mv "$tmp/prefix" "$tmp/moved"            # relocatable: nothing may point at the first path
p=$tmp/moved
for f in include/tilelang/tilelang.h include/tilelang/runtime.h bin/tl-opt bin/tl-run; do
  [[ -e "$p/$f" ]] || { echo "install: $f missing" >&2; exit 1; }
done
lib=$(find "$p" -name 'libtilelang.so.*.*' -type f | head -1)
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
echo "install: $(basename "$lib"), SONAME $soname"
[[ "$soname" == libtilelang.so.* ]] || { echo "install: no SONAME" >&2; exit 1; }
"$p/bin/tl-run" --device=cpu --check -D N=1000 "$root/examples/c-consumer/elementwise.py" | tail -1

echo "install: out-of-tree example with find_package(tilelang)"
cmake -S "$root/examples/c-consumer" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$p" >/dev/null
cmake --build "$tmp/cmake-build" >/dev/null
"$tmp/cmake-build/saxpy_cpu"

echo "install: out-of-tree example with pkg-config"
"$root/examples/c-consumer/build-pkgconfig.sh" "$p" "$tmp/pc-build"
echo "install: PASS (cmake, pkg-config)"
