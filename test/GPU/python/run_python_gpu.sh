#!/usr/bin/env bash
# Runs test/GPU/python/run_python_gpu.py with the package of this tree through PYTHONPATH (no pip, no
# network): from the repository (python/, build/libtilelang.so) or from the GPU bundle
# (build-device/python, build-device/lib/libtilelang.so.0; scripts/build-device.sh copies this script
# to build-device/test/GPU/python/).  Exit 77 without python3, PyTorch or a GPU.
#   test/GPU/python/run_python_gpu.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
py=$(command -v python3 || true)
[[ -n "$py" ]] || { echo "python-gpu: SKIP: no python3"; exit 77; }
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
if [[ -z "${TL_LIBRARY:-}" ]]; then
  for l in "$root/lib/libtilelang.so.0" "$root/build/libtilelang.so"; do
    [[ -f "$l" ]] && { export TL_LIBRARY=$l; break; }
  done
fi
exec "$py" "$here/run_python_gpu.py" --repo "$root"
