#!/usr/bin/env bash
# Installs the build and test dependencies of tilelang-ptx on Debian 12
# (bookworm).  Idempotent: does nothing when everything is installed.  Uses
# sudo only when not running as root.
set -euo pipefail

PKGS=(
  gcc make cmake python3           # toolchain
  pkgconf                          # scripts/test-install.sh (the installed tilelang.pc)
  python3-venv python3-numpy python3-pytest python3-setuptools python3-wheel  # python/tests (scripts/test-python.sh)
  python3-dev                      # Python.h: the C extension tilelang_ptx._fastcall (python/setup.py)
  clang-19 libclang-rt-19-dev      # fuzz build (libFuzzer, sanitizer runtimes)
  llvm-19-dev libzstd-dev          # LLVM C API for the NVPTX code generator
  llvm-19-tools                    # lit, FileCheck, not
  libcriterion-dev                 # unit tests
  libdlpack-dev                    # DLPack header of the runtime API
  libxxhash-dev                    # XXH3 keys and checksums of the kernel cache (lib/Runtime/cache.c)
  universal-ctags                  # scripts/check-size.sh (function extents)
  clang-format-14                  # scripts/check-format.sh (the tree's one style)
  gnuplot-nox                      # benchmarks/results/plot.sh only (no test needs it)
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# The CUDA toolkit is not a Debian package here: it is expected at
# /usr/local/cuda (ptxas validates PTX in the tests; libdevice.10.bc gives
# accurate math).  TL_PTXAS and TL_LIBDEVICE override the paths.
check_cuda() {
  local ptxas=${TL_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
  local libdevice=${TL_LIBDEVICE:-/usr/local/cuda/nvvm/libdevice/libdevice.10.bc}
  if [ ! -x "$ptxas" ] || [ ! -f "$libdevice" ]; then
    echo "install-deps: warning: the CUDA toolkit was not found (ptxas: $ptxas, libdevice: $libdevice)." >&2
    echo "install-deps: the build works without it, but the tests need ptxas and kernels using math need" >&2
    echo "install-deps: libdevice: install CUDA 12 or 13 at /usr/local/cuda or set TL_PTXAS / TL_LIBDEVICE." >&2
  fi
}

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all dependencies are installed"
  check_cuda
  exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then SUDO=(sudo); fi
echo "install-deps: installing ${missing[*]}"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
check_cuda
