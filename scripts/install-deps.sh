#!/usr/bin/env bash
# Installs the build and test dependencies of tilelang-ptx on Debian 12
# (bookworm).  Idempotent: does nothing when everything is installed.  Uses
# sudo only when not running as root.
set -euo pipefail

PKGS=(
  gcc make cmake python3           # toolchain
  clang-19 libclang-rt-19-dev      # fuzz build (libFuzzer, sanitizer runtimes)
  llvm-19-dev libzstd-dev          # LLVM C API for the NVPTX code generator
  llvm-19-tools                    # lit, FileCheck, not
  libcriterion-dev                 # unit tests
  libdlpack-dev                    # DLPack header of the runtime API
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all dependencies are installed"
  exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then SUDO=(sudo); fi
echo "install-deps: installing ${missing[*]}"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
