#!/usr/bin/env bash
# Fetch, unpack and build the one ggml the ctensor plugin is pinned to (ggml/README.md):
# the llama.cpp tree vendored in llama-cpp-python==0.3.36 (ggml 0.25.3, backend API 2).
# Idempotent: the tarball, the source and each build (keyed by a hash of its options)
# live under ${CT_GGML_CACHE:-~/.cache/ctensor-ggml}; a second run does nothing.
# Prints, as its last line, CT_GGML_SOURCE_DIR=... and CT_GGML_BUILD_DIR=... for eval.
set -euo pipefail

PKG_VERSION=0.3.36
PKG_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
GGML_VERSION_WANT=0.25.3
CACHE=${CT_GGML_CACHE:-$HOME/.cache/ctensor-ggml}
JOBS=${CT_GGML_JOBS:-2}
TARGETS=(test-backend-ops llama-completion llama-bench ggml-rpc-server llama-simple)

log() { echo "build-ggml: $*" >&2; }

mkdir -p "$CACHE/src"
# One build at a time per cache (scripts/test.sh and scripts/main.sh may run side by side).
exec 9>"$CACHE/.lock"
flock 9
TARBALL="$CACHE/src/llama_cpp_python-$PKG_VERSION.tar.gz"
SRC="$CACHE/src/llama_cpp_python-$PKG_VERSION/vendor/llama.cpp"

if [ ! -f "$TARBALL" ]; then
  log "downloading llama-cpp-python==$PKG_VERSION (source distribution)"
  tmp=$(mktemp -d "$CACHE/src/dl.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --no-deps --no-binary :all: "llama-cpp-python==$PKG_VERSION" -d "$tmp" >&2
  mv "$tmp/llama_cpp_python-$PKG_VERSION.tar.gz" "$TARBALL"
  rm -rf "$tmp"
  trap - EXIT
fi
if ! echo "$PKG_SHA256  $TARBALL" | sha256sum -c --quiet -; then
  rm -f "$TARBALL" # the next run downloads it again
  log "checksum mismatch: $TARBALL (removed)"
  exit 1
fi

if [ ! -f "$SRC/.ct-unpacked" ]; then
  log "unpacking"
  rm -rf "$CACHE/src/llama_cpp_python-$PKG_VERSION"
  tar -xzf "$TARBALL" -C "$CACHE/src"
  touch "$SRC/.ct-unpacked"
fi

# The pin is checked in the tree itself, not only by the file name.
ver=$(sed -n 's/^set(GGML_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\))/\2/p' "$SRC/ggml/CMakeLists.txt" | paste -sd.)
[ "$ver" = "$GGML_VERSION_WANT" ] || { log "expected ggml $GGML_VERSION_WANT, found $ver"; exit 1; }
grep -q '#define GGML_BACKEND_API_VERSION 2' "$SRC/ggml/src/ggml-backend-impl.h" \
  || { log "expected GGML_BACKEND_API_VERSION 2"; exit 1; }

# Shared libraries so that the host and the dlopen'ed plugin share one libggml-base.
# GGML_BACKEND_DL stays OFF: ggml_backend_load_all() reads GGML_BACKEND_PATH either way
# (ggml-backend-reg.cpp), and a static CPU backend needs no backend files next to the tools.
# GGML_NATIVE=ON (the CPU reference is compared against), so the CPU's flags join the key.
OPTS=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DGGML_BACKEND_DL=OFF
      -DGGML_NATIVE=ON -DGGML_RPC=ON -DGGML_OPENMP=ON
      -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_OPENCL=OFF -DGGML_METAL=OFF -DGGML_BLAS=OFF
      -DLLAMA_BUILD_TESTS=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_EXAMPLES=ON
      -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF)
command -v ninja >/dev/null || OPTS=("${OPTS[@]:2}")
cpuflags=$(grep -m1 '^flags' /proc/cpuinfo || true)
key=$(printf '%s\n' "$PKG_SHA256" "${OPTS[*]}" "${TARGETS[*]}" "$cpuflags" "$(${CC:-cc} --version | head -1)" | sha256sum | cut -c1-12)
BUILD="$CACHE/build-$key"

if [ -f "$BUILD/.ct-built" ]; then
  log "cached build: $BUILD"
else
  log "configuring $BUILD"
  cmake -S "$SRC" -B "$BUILD" "${OPTS[@]}" >&2
  log "building ${TARGETS[*]} with -j$JOBS"
  nice -n 19 cmake --build "$BUILD" -j "$JOBS" --target "${TARGETS[@]}" >&2
  touch "$BUILD/.ct-built"
fi
echo "CT_GGML_SOURCE_DIR=$SRC CT_GGML_BUILD_DIR=$BUILD"
