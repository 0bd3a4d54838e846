#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and test ctensor:
# the compiler toolchain, CMake, OpenCL headers/loader with PoCL (OpenCL on the
# CPU), clang with its sanitizer and libFuzzer runtimes, and the Python packages the
# format checks compare against (numpy, gguf).
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
packages="build-essential cmake pkg-config python3 python3-pip clang libclang-rt-dev \
  opencl-headers ocl-icd-opencl-dev pocl-opencl-icd clinfo"
missing=""
for p in $packages; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
if ! python3 -c 'import numpy, gguf' 2>/dev/null; then
  python3 -m pip install -q numpy gguf 2>/dev/null || python3 -m pip install -q --break-system-packages numpy gguf
fi
echo "bootstrap: dependencies present"
