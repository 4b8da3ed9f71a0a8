#!/usr/bin/env bash
# Configures (once) and builds gpudissect; scripts/test.sh runs this, then the tests.
# Usage: scripts/install-deps.sh && scripts/build.sh && build/gpudissect run
#   BUILD_DIR=dir   build folder (default: build)
#   JOBS=N          parallel build jobs (default: the number of cores)
#   GD_REQUIRE_CUDA=1  fail when nvcc exists but the CUDA backend was not built (CI sets it)
#   GD_REQUIRE_VULKAN=1  fail when the Vulkan backend was not built (CI sets it: it installs
#                      the loader, glslangValidator and lavapipe)
#   GD_CMAKE_ARGS="..."  extra arguments for the first configure (word-split)
#   GD_CUDA_ARCH=NN  the GPU architecture to build CUDA kernels for (default 90: Hopper)
#   GD_BUILD_TESTS=ON  also build the test suite (scripts/test.sh sets it; the main job
#                      does not need it, so a plain build skips it)
#   GD_GENERATOR=X   CMake's generator for a new build folder (default: Ninja where ninja is
#                      installed, else CMake's default, make)
#   GD_UNITY=OFF     compile each C++ file on its own (default ON: a unity build joins up to
#                      16 files of a library into one translation unit, which parses the
#                      shared headers once per group and more than halves a fresh build; OFF
#                      suits editing, where a change recompiles one file, not its group)
# Both backends are built when their toolkits are found: CUDA for sm_90 when nvcc is on PATH
# or at /usr/local/cuda/bin/nvcc, OpenCL when the ICD loader and headers are installed.
# An existing build folder keeps its configuration (delete it to reconfigure from scratch).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
GD_REQUIRE_CUDA=${GD_REQUIRE_CUDA:-0}
GD_REQUIRE_VULKAN=${GD_REQUIRE_VULKAN:-0}
GD_BUILD_TESTS=${GD_BUILD_TESTS:-OFF}

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
  echo "build.sh: FAILED: $*" >&2
  echo "########################################################################" >&2
  exit 1
}

if [[ ! -f $BUILD_DIR/CMakeCache.txt ]]; then
  args=(-S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=${GD_CUDA_ARCH:-90}
    -DGD_BUILD_TESTS="$GD_BUILD_TESTS"
    -DCMAKE_UNITY_BUILD="${GD_UNITY:-ON}" -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)
  [[ -n $nvcc ]] && args+=(-DCMAKE_CUDA_COMPILER="$nvcc")
  # Ninja starts a target's files while the libraries it links are still compiling; make
  # waits for each library to be archived first, and builds the targets named on one command
  # line one after another, so one of two cores idles at every such step.
  generator=${GD_GENERATOR-}
  [[ -z $generator ]] && command -v ninja >/dev/null 2>&1 && generator=Ninja
  [[ -n $generator ]] && args+=(-G "$generator")
  read -r -a extra <<<"${GD_CMAKE_ARGS:-}"
  args+=("${extra[@]}")
  echo "+ cmake ${args[*]}"
  mkdir -p "$BUILD_DIR"
  cmake "${args[@]}" 2>&1 | tee "$BUILD_DIR/configure.log"
  backends=$(sed -n 's/.*gpudissect backends: //p' "$BUILD_DIR/configure.log" | tail -1)
  echo "build.sh: backends configured: ${backends:-none}"
  if [[ -n $nvcc && $backends != *cuda* ]]; then
    msg="nvcc exists ($nvcc) but CMake did not enable the CUDA backend (see $BUILD_DIR/configure.log)"
    [[ $GD_REQUIRE_CUDA == 1 ]] && die "$msg"
    echo "build.sh: WARNING: $msg" >&2
  fi
else
  echo "build.sh: $BUILD_DIR already configured; building with its settings"
  # Only the test switch follows the caller: the tests need it on, the main job does not.
  # Configured again every time (about a second): the revision a result names is read at
  # configure time, and an older one would be named by a binary built from newer sources.
  have=$(sed -n 's/^GD_BUILD_TESTS:BOOL=//p' "$BUILD_DIR/CMakeCache.txt")
  echo "+ cmake -B $BUILD_DIR -DGD_BUILD_TESTS=$GD_BUILD_TESTS"
  cmake -B "$BUILD_DIR" -DGD_BUILD_TESTS="$GD_BUILD_TESTS" >>"$BUILD_DIR/configure.log" 2>&1 ||
    die "cmake could not configure $BUILD_DIR again (see $BUILD_DIR/configure.log)"
  if [[ ${have^^} != "${GD_BUILD_TESTS^^}" ]]; then echo "build.sh: tests now $GD_BUILD_TESTS"; fi
fi

echo "+ cmake --build $BUILD_DIR -j$JOBS"
cmake --build "$BUILD_DIR" -j"$JOBS"

version=$("$BUILD_DIR/gpudissect" --version) || die "$BUILD_DIR/gpudissect --version failed"
echo "$version"
if [[ -n $nvcc && $version != *"backends: cuda, opencl"* ]]; then
  msg="nvcc exists ($nvcc) but the binary was not built with both backends (expected 'backends: cuda, opencl')"
  [[ $GD_REQUIRE_CUDA == 1 ]] && die "$msg"
  echo "build.sh: WARNING: $msg" >&2
fi
if [[ $version != *"backends: "*vulkan* ]]; then
  msg="the Vulkan backend was not built (no Vulkan loader/headers or glslangValidator at configure time; see $BUILD_DIR/configure.log)"
  [[ $GD_REQUIRE_VULKAN == 1 ]] && die "$msg"
  echo "build.sh: note: $msg" >&2
fi
