#!/usr/bin/env bash
# Configures (once), builds and tests gpudissect: the README's build-and-test command.
# Usage: scripts/install-deps.sh && scripts/test.sh
#   BUILD_DIR=dir   build folder (default: build)
#   JOBS=N          parallel build and test jobs (default: 2)
#   GD_REQUIRE_CUDA=1  fail when nvcc exists but the CUDA backend was not built (CI sets it)
#   GD_CMAKE_ARGS="..."  extra arguments for the first configure (word-split)
# Both backends are built when their toolkits are found: CUDA for sm_90 when nvcc is on PATH
# or at /usr/local/cuda/bin/nvcc, OpenCL when the ICD loader and headers are installed.
# An existing build folder keeps its configuration (delete it to reconfigure from scratch).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-2}
GD_REQUIRE_CUDA=${GD_REQUIRE_CUDA:-0}

[[ -d /usr/local/cuda/bin ]] && export PATH=/usr/local/cuda/bin:$PATH
nvcc=""
if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  nvcc=/usr/local/cuda/bin/nvcc
elif command -v nvcc >/dev/null 2>&1; then
  nvcc=$(command -v nvcc)
fi

die() {
  echo >&2
  echo "########################################################################" >&2
  echo "test.sh: FAILED: $*" >&2
  echo "########################################################################" >&2
  exit 1
}

if [[ ! -f $BUILD_DIR/CMakeCache.txt ]]; then
  args=(-S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90)
  [[ -n $nvcc ]] && args+=(-DCMAKE_CUDA_COMPILER="$nvcc")
  read -r -a extra <<<"${GD_CMAKE_ARGS:-}"
  args+=("${extra[@]}")
  echo "+ cmake ${args[*]}"
  mkdir -p "$BUILD_DIR"
  cmake "${args[@]}" 2>&1 | tee "$BUILD_DIR/configure.log"
  backends=$(sed -n 's/.*gpudissect backends: //p' "$BUILD_DIR/configure.log" | tail -1)
  echo "test.sh: backends configured: ${backends:-none}"
  if [[ -n $nvcc && $backends != *cuda* ]]; then
    msg="nvcc exists ($nvcc) but CMake did not enable the CUDA backend (see $BUILD_DIR/configure.log)"
    [[ $GD_REQUIRE_CUDA == 1 ]] && die "$msg"
    echo "test.sh: WARNING: $msg" >&2
  fi
else
  echo "test.sh: $BUILD_DIR already configured; building with its settings"
fi

echo "+ cmake --build $BUILD_DIR -j$JOBS"
cmake --build "$BUILD_DIR" -j"$JOBS"

version=$("$BUILD_DIR/gpudissect" --version) || die "$BUILD_DIR/gpudissect --version failed"
echo "$version"
if [[ -n $nvcc && $version != *"backends: cuda, opencl"* ]]; then
  msg="nvcc exists ($nvcc) but the binary was not built with both backends (expected 'backends: cuda, opencl')"
  [[ $GD_REQUIRE_CUDA == 1 ]] && die "$msg"
  echo "test.sh: WARNING: $msg" >&2
fi

echo "+ ctest --test-dir $BUILD_DIR --output-on-failure -j$JOBS"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS"
