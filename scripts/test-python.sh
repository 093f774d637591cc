#!/usr/bin/env bash
# CI step "python": pip-installs python/ (the tilelang_ptx package) into a fresh virtual environment
# under BUILD_DIR/python-venv (Debian's python3 with --system-site-packages, for python3-numpy and
# python3-pytest; --no-build-isolation: setuptools from python3-setuptools, no network needed; the C
# extension tilelang_ptx._fastcall is built there, from python3-dev's headers, and must load), then
# runs the pytest suite python/tests from outside the checkout on the CPU executor with that build's
# libtilelang (TL_LIBRARY), and the Python examples on the CPU with NumPy.
#   scripts/test-python.sh [BUILD_DIR]      (default build; it must be built)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
py=/usr/bin/python3                       # Debian's: the python3-* packages are installed for it
[[ -x $py ]] || py=$(command -v python3)
venv=$build/python-venv
rm -rf "$venv"
"$py" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --no-build-isolation --no-deps --no-index "$root/python"
export TL_LIBRARY=$build/libtilelang.so TL_EXPECT_FASTCALL=1   # test_fastcall.py: the extension is loaded
export TL_CACHE=0                         # the user's kernel cache stays untouched
cd "$build"                               # not the checkout: the installed package is imported
"$venv/bin/python" -c 'import tilelang_ptx, sys; print("python: tilelang_ptx", tilelang_ptx.__version__,
  "from", tilelang_ptx.__file__, "with", tilelang_ptx.library_path,
  "; fast path:", tilelang_ptx.kernel.fast_path()[0])'
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests"
for ex in "$root"/examples/python/*.py; do
  echo "python: $(basename "$ex") (CPU executor, NumPy)"
  "$venv/bin/python" "$ex" --small
done
