#!/usr/bin/env bash
# Installs the Debian 12 packages that building and testing gpudissect needs.
# Usage: scripts/install-deps.sh        (as root, or as a user with sudo)
# Idempotent: packages already installed are left alone; when nothing is missing,
# apt is not run at all (so it also works offline).
# CUDA is NOT installed here: it comes from NVIDIA (on CI, nvcc is already at
# /usr/local/cuda/bin/nvcc). Without nvcc only the OpenCL backend is built.
set -euo pipefail

# chromium, poppler-utils (pdfinfo, pdftoppm), fonts-dejavu-core: the report page test
# (tests/browser) renders the HTML report headless, prints it to PDF and checks the pages; it
# is skipped where they are missing. chromium is large (~80 MB download, ~290 MB installed)
# and installs non-interactively on Debian 12; the font keeps the text measurable without
# the recommended font packages.
# libopenmpi-dev, openmpi-bin: `gpudissect fleet` gathers over MPI (optional at build time:
# without them fleet runs the ranks of one node as local processes); CI runs it under mpirun.
# libvulkan-dev, glslang-tools, mesa-vulkan-drivers, spirv-tools, vulkan-tools: the Vulkan
# backend (the loader, the GLSL -> SPIR-V compiler run at build time, lavapipe, the CPU
# driver its tests run on, spirv-val for the compiled shaders, vulkaninfo for CI's log).
# python3-prometheus-client: tests/cli/test_fleet.sh parses the --prometheus files with it.
# make: CMake's default generator needs it, and cmake only *recommends* it, so it must be
# named when installing with --no-install-recommends. ninja-build: scripts/build.sh and
# scripts/test.sh use Ninja where it is installed (it keeps both cores busy where make
# waits for one library before the next), make where it is not.
# help2man, dpkg-dev: the man page made from --help at build time, and the .deb's Depends
# (dpkg-shlibdeps) that cpack writes (cmake/install.cmake). python3-jsonschema: the JSON
# Schemas' test (tests/schema), run against every committed result.
# clang-15: the AMD OpenCL kernels are built for amdgcn (gfx90a, gfx1030, gfx1100) by the
# opencl_amd_compile test; Debian's clang (14) knows no gfx11. PoCL (libpocl2) already
# depends on clang-15: naming it costs no download, and keeps the test's compiler if PoCL goes.
PACKAGES=(
  cmake make ninja-build g++
  libcli11-dev nlohmann-json3-dev libgtest-dev
  opencl-headers opencl-c-headers opencl-clhpp-headers ocl-icd-opencl-dev
  pocl-opencl-icd clinfo clang-15
  gnuplot-nox python3 python3-prometheus-client
  chromium poppler-utils fonts-dejavu-core
  libopenmpi-dev openmpi-bin
  libvulkan-dev glslang-tools mesa-vulkan-drivers spirv-tools vulkan-tools
  help2man dpkg-dev python3-jsonschema
)

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: apt-get not found; this script is for Debian 12 (bookworm)." >&2
  echo "install-deps: install these packages (or equivalents) by hand: ${PACKAGES[*]}" >&2
  exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
else
  echo "install-deps: installing: ${missing[*]}"
  SUDO=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO=(sudo)
    else
      echo "install-deps: not root and no sudo; run as root: apt-get install ${missing[*]}" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  # --no-install-recommends: none of these needs its recommends for building or testing.
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi

# CUDA: report only, never install.
nvcc_path=""
if command -v nvcc >/dev/null 2>&1; then
  nvcc_path=$(command -v nvcc)
elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
  nvcc_path=/usr/local/cuda/bin/nvcc
fi
if [[ -n $nvcc_path ]]; then
  ver=$("$nvcc_path" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p' | head -1)
  echo "install-deps: nvcc found: $nvcc_path${ver:+ (CUDA $ver)}; the CUDA backend will be built"
  if ! command -v nvcc >/dev/null 2>&1; then
    echo "install-deps: (not on PATH; scripts/test.sh adds /usr/local/cuda/bin)"
  fi
else
  echo "install-deps: nvcc not found (not on PATH, not at /usr/local/cuda/bin/nvcc):"
  echo "install-deps: only the OpenCL backend will be built. CUDA comes from NVIDIA's installer."
fi
