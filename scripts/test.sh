#!/usr/bin/env bash
# Builds gpudissect (scripts/build.sh) and runs every test: the README's test command.
# Usage: scripts/install-deps.sh && scripts/test.sh
#   BUILD_DIR, JOBS, GD_REQUIRE_CUDA, GD_REQUIRE_VULKAN, GD_CMAKE_ARGS, GD_CUDA_ARCH: as for
#   scripts/build.sh (JOBS defaults to 2 here: the test machines have 2 cores)
#   GD_REQUIRE_VULKAN=1  also makes the Vulkan tests fail instead of skipping where no
#   Vulkan device (lavapipe) or spirv-val is found
#   GD_REQUIRE_OPENCL=1  the PoCL CPU-cache test fails instead of skipping when there is no
#   OpenCL CPU device or /sys names no cache sizes (CI sets it; GD_REQUIRE_BROWSER likewise)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=${BUILD_DIR:-build}
export BUILD_DIR JOBS=${JOBS:-2} GD_BUILD_TESTS=ON
bash scripts/build.sh
echo "+ ctest --test-dir $BUILD_DIR --output-on-failure -j$JOBS"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS"
