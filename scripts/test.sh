#!/usr/bin/env bash
# Builds gpudissect (scripts/build.sh) and runs every test: the README's test command.
# Usage: scripts/install-deps.sh && scripts/test.sh
#   BUILD_DIR, JOBS, GD_REQUIRE_CUDA, GD_REQUIRE_VULKAN, GD_CMAKE_ARGS, GD_CUDA_ARCH: as for
#   scripts/build.sh (JOBS defaults to 2 here: the test machines have 2 cores)
#   GD_REQUIRE_VULKAN=1  also makes the Vulkan tests fail instead of skipping where no
#   Vulkan device (lavapipe) or spirv-val is found
#   GD_SANITIZE=0  skips the second, sanitizer build (BUILD_DIR-sanitize) of the unit tests
#   and the CLI input checks; GD_FUZZ_SECONDS (default 30) is how long its fuzz test runs
#   GD_REQUIRE_OPENCL=1  the PoCL CPU-cache test fails instead of skipping when there is no
#   OpenCL CPU device or /sys names no cache sizes (CI sets it; GD_REQUIRE_BROWSER likewise)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=${BUILD_DIR:-build}
export BUILD_DIR JOBS=${JOBS:-2} GD_BUILD_TESTS=ON
bash scripts/build.sh
echo "+ ctest --test-dir $BUILD_DIR --output-on-failure -j$JOBS"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS"

# Once more under AddressSanitizer and UndefinedBehaviorSanitizer, GPU-free: the unit tests
# (the readers' fuzz test for GD_FUZZ_SECONDS, 30 s here) and the command line's input checks
# (tests/cli/test_input.sh), in a second build folder without backends. GD_SANITIZE=0 skips it.
if [[ ${GD_SANITIZE:-1} != 0 ]]; then
  SAN_DIR=${BUILD_DIR}-sanitize
  t=$(date +%s)
  if [[ ! -f $SAN_DIR/CMakeCache.txt ]]; then
    read -r -a extra <<<"${GD_CMAKE_ARGS:-}"
    # clang where installed (CI installs clang-15): with both sanitizers at -O0 it compiles a
    # file in about two thirds of g++'s CPU time; g++ otherwise.
    for cxx in clang++-15 clang++ ""; do
      [[ -z $cxx ]] || command -v "$cxx" >/dev/null 2>&1 && break
    done
    [[ -n $cxx ]] && extra=(-DCMAKE_CXX_COMPILER="$cxx" "${extra[@]}")
    # Ninja where installed (as scripts/build.sh): it builds the two targets below side by
    # side, make one after the other (the command line's whole CLI after the unit tests).
    generator=${GD_GENERATOR-}
    [[ -z $generator ]] && command -v ninja >/dev/null 2>&1 && generator=Ninja
    [[ -n $generator ]] && extra=(-G "$generator" "${extra[@]}")
    # -O0: a third less compile time than -O1 (the build is most of this step's cost);
    # -g1: line numbers in the sanitizers' reports.
    mkdir -p "$SAN_DIR"
    # Unity build: the libraries' files compiled 16 to a translation unit (each probe's
    # measurement files only with each other), which parses the headers a sixteenth as often.
    cmake -S . -B "$SAN_DIR" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O0 -g1" \
      -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 \
      -DGD_SANITIZE=ON -DGD_BUILD_TESTS=ON -DGD_WITH_CUDA=OFF -DGD_WITH_OPENCL=OFF \
      -DGD_WITH_VULKAN=OFF -DGD_WITH_MPI=OFF "${extra[@]}" >"$SAN_DIR/configure.log" 2>&1 ||
      { cat "$SAN_DIR/configure.log"; exit 1; }
  fi
  echo "+ cmake --build $SAN_DIR -j$JOBS --target unit_tests gpudissect"
  cmake --build "$SAN_DIR" -j"$JOBS" --target unit_tests gpudissect
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  # Jobs, longest first, JOBS at a time, each started as soon as a core is free: the fuzz
  # test (it runs for a fixed time), the command line's input checks, then the other unit
  # tests in six shards, short enough that the two cores end close together. A job's output
  # is shown when they have all ended. Left out here, run by ctest as always: the three tests
  # that read the committed results or model a whole H200 (22-24 s each under the
  # sanitizers, half of the unit tests' time there), whose code paths the other tests and
  # the fuzz test cover.
  unit=$(printf %q "$SAN_DIR/tests/unit_tests")
  cli=$(printf %q "$SAN_DIR/gpudissect")
  fuzz='FuzzReaders.*'
  heavy='FigureIds.CommittedResultsAreDeclared:HierarchyCheck.CommittedGpuCurvesStillPass'
  heavy+=':MemoryProbe.L2PartsFitTheirTimeOnAnH200SizedL2'
  rest="--gtest_brief=1 --gtest_filter='-$fuzz:$heavy'"
  todo=("GD_FUZZ_SECONDS=${GD_FUZZ_SECONDS:-30} $unit --gtest_brief=1 --gtest_filter='$fuzz'"
        "bash tests/cli/test_input.sh $cli")
  for s in 0 1 2 3 4 5; do todo+=("GTEST_TOTAL_SHARDS=6 GTEST_SHARD_INDEX=$s $unit $rest"); done
  for i in "${!todo[@]}"; do
    while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
    echo "+ job $i (ASan + UBSan): ${todo[i]}"
    (rc=0; bash -c "${todo[i]}" >"$SAN_DIR/job$i.log" 2>&1 || rc=$?; echo $rc >"$SAN_DIR/job$i.rc") &
  done
  wait
  failed=0
  for i in "${!todo[@]}"; do
    echo "---- job $i: ${todo[i]} ----"
    cat "$SAN_DIR/job$i.log"
    [[ $(cat "$SAN_DIR/job$i.rc") == 0 ]] || failed=1
  done
  ((failed == 0)) || { echo "test.sh: a sanitizer job failed (its output is above)"; exit 1; }
  echo "test.sh: time: sanitizer build and tests $(( $(date +%s) - t )) s"
fi
