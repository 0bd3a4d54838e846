#!/usr/bin/env bash
# Builds ctensor with warnings as errors and runs the whole test suite, then the
# reliability job: the suite under ASan+UBSan, the threading tests under TSan,
# and a short run of each fuzz target (scripts/sanitize.sh). Then ctensor inside the
# pinned llama.cpp (ggml/README.md): ggml's test-backend-ops on the PoCL device and on
# ctensor's CPU device, Gemma 3 270M and two generated random-weight models (a Llama and a
# qwen3moe, scripts/ggml/make-models.py, cached in ~/.cache/ctensor-models) token for token
# against ggml-cpu with flash attention off and on, and Gemma through llama.cpp's rpc-server
# serving a ctensor device.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
t_start=$SECONDS
t_sec=$SECONDS
timings=()
section() {
  if [ -n "${sec_name:-}" ]; then timings+=("$(printf '%-46s %5d s' "$sec_name" $((SECONDS - t_sec)))"); fi
  sec_name=$1 t_sec=$SECONDS
  [ -n "$1" ] && printf '\n==== %s ====\n' "$1"
  return 0
}

section "ctensor: build and test suite"
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCT_WERROR=ON >/dev/null
cmake --build build-test -j"$jobs"
ctest --test-dir build-test --output-on-failure -j"$jobs"
section "ctensor: sanitizers and fuzzing"
scripts/sanitize.sh

section "ggml: pinned llama.cpp (built once, then cached)"
ggml_dirs=$(scripts/ggml/build-ggml.sh | tail -1) # an assignment, so a failed build stops the script
eval "$ggml_dirs"
section "ggml: plugin build"
cmake -S . -B build-test-ggml -DCMAKE_BUILD_TYPE=Release -DCT_WERROR=ON -DCT_BUILD_TESTS=OFF \
  -DCT_GGML_SOURCE_DIR="$CT_GGML_SOURCE_DIR" -DCT_GGML_BUILD_DIR="$CT_GGML_BUILD_DIR" >/dev/null
cmake --build build-test-ggml -j"$jobs" --target ggml-ctensor ct-llama-greedy ct-q8-ties test_ggml_quants
plugin=build-test-ggml/ggml/libggml-ctensor.so
# The OpenCL device the tests need: PoCL on a machine without a GPU (scripts/bootstrap.sh).
ggml_devices=$(GGML_BACKEND_PATH=$plugin "$CT_GGML_BUILD_DIR/bin/llama-completion" --list-devices 2>/dev/null || true)
if ! grep -q 'CTOpenCL0' <<<"$ggml_devices"; then
  echo "test.sh: no ctensor OpenCL device (CTOpenCL0): is an OpenCL driver installed (PoCL: scripts/bootstrap.sh)?" >&2
  exit 1
fi
section "ggml: test-backend-ops (CTOpenCL0, CTCPU)"
# The evidence for the one allowed exception (ggml/README.md): still ggml-cpu's q8_0 rounding.
build-test-ggml/ggml/ct-q8-ties
# Every op but the two whose case lists are thousands of large cases (FLASH_ATTN_EXT about
# 5300 a device, MUL_MAT_ID about 950); of those, one slice each here (ggml/README.md has the
# full runs). test-backend-ops takes a regex on the op name without parentheses.
TBO_ARGS="-o ^[A-EG-LN-Z]|^F[^L]|^FL[^A]|^M[^U]|^MUL$|^MUL_MAT$|^MUL_MAT_[^I]" \
  scripts/ggml/test-backend-ops.sh "$plugin" "$CT_GGML_BUILD_DIR/bin/test-backend-ops" CTOpenCL0 CTCPU
TBO_ARGS="-o FLASH_ATTN_EXT -p hsk=128,hsv=128,nh=4," \
  scripts/ggml/test-backend-ops.sh "$plugin" "$CT_GGML_BUILD_DIR/bin/test-backend-ops" CTOpenCL0 CTCPU
TBO_ARGS="-o MUL_MAT_ID -p n_mats=4,n_used=2," \
  scripts/ggml/test-backend-ops.sh "$plugin" "$CT_GGML_BUILD_DIR/bin/test-backend-ops" CTOpenCL0 CTCPU
section "ggml: quantizers against ggml's reference quantizers"
build-test-ggml/ggml/test_ggml_quants 1000
section "ggml: Gemma 3 270M on CTOpenCL0, FA off/on; RPC"
CT_MODEL_SET=gemma scripts/ggml/test-model.sh "$plugin" "$CT_GGML_BUILD_DIR" build-test-ggml/ggml/ct-llama-greedy CTOpenCL0
section "ggml: generated llama and moe on CTOpenCL0"
CT_MODEL_SET="llama moe" CT_MODEL_TESTS=model \
  scripts/ggml/test-model.sh "$plugin" "$CT_GGML_BUILD_DIR" build-test-ggml/ggml/ct-llama-greedy CTOpenCL0
section ""
printf '\n==== timings ====\n'
printf '%s\n' "${timings[@]}"
printf '%-46s %5d s\n' "total" $((SECONDS - t_start))
