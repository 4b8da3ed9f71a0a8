#!/usr/bin/env bash
# The Debian package: cpack in the build folder, its Depends (the OpenCL and Vulkan loaders
# where the binary links them, no CUDA package), dpkg -i, the installed binary's checks from
# another folder (check_installed.sh with prefix /usr), then dpkg -r.
# Usage: tests/install/test_deb.sh [BUILD_DIR]   (as root; .ci/run runs it after the tests,
# reusing their build folder). Exit 77 when not root or without dpkg.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$(realpath "${1:-$SRC/build}")
[[ $(id -u) -eq 0 ]] || { echo "test_deb: skipped: dpkg -i needs root"; exit 77; }
command -v dpkg >/dev/null || { echo "test_deb: skipped: no dpkg"; exit 77; }
if dpkg-query -W -f='${Status}' gpudissect 2>/dev/null | grep -q "install ok installed"; then
  echo "test_deb: a gpudissect package is already installed; remove it first (dpkg -r gpudissect)" >&2
  exit 1
fi
fail=0

cmake --build "$BUILD" -j"${JOBS:-2}"  # up to date after the tests: the man page, the binary
rm -f "$BUILD"/gpudissect_*.deb
(cd "$BUILD" && cpack -G DEB)
deb=$(ls "$BUILD"/gpudissect_*.deb)
echo "test_deb: $deb ($(du -h "$deb" | cut -f1))"
dpkg-deb -f "$deb" Package Version Depends Suggests Description

depends=$(dpkg-deb -f "$deb" Depends)
needed=$(readelf -d "$BUILD/gpudissect" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
echo "test_deb: links: $(tr '\n' ' ' <<<"$needed")"
if grep -qi "cuda\|nvidia\|nvrtc" <<<"$depends"; then
  echo "FAIL: Depends names a CUDA package: $depends"
  fail=1
fi
# The CUDA toolkit is not on a driver-only node: NVRTC is opened at run time, never linked.
if grep -q "^libnvrtc\|^libcudart" <<<"$needed"; then
  echo "FAIL: the binary links a CUDA toolkit library: $(tr '\n' ' ' <<<"$needed")"
  fail=1
fi
if grep -q "^libOpenCL" <<<"$needed" && ! grep -qi "opencl" <<<"$depends"; then
  echo "FAIL: the binary links the OpenCL ICD loader, Depends lacks it: $depends"
  fail=1
fi
if grep -q "^libvulkan" <<<"$needed" && ! grep -q "libvulkan1" <<<"$depends"; then
  echo "FAIL: the binary links the Vulkan loader, Depends lacks libvulkan1: $depends"
  fail=1
fi

trap 'dpkg -r gpudissect >/dev/null 2>&1 || true' EXIT
dpkg -i "$deb"
[[ $(command -v gpudissect) == /usr/bin/gpudissect ]] || { echo "FAIL: gpudissect not on PATH at /usr/bin"; fail=1; }
bash "$SRC/tests/install/check_installed.sh" /usr "$SRC" || fail=1

dpkg -r gpudissect
trap - EXIT
if [[ -e /usr/bin/gpudissect || -e /usr/share/gpudissect ]]; then
  echo "FAIL: dpkg -r left /usr/bin/gpudissect or /usr/share/gpudissect"
  fail=1
fi
((fail)) && { echo "test_deb: FAILED"; exit 1; }
echo "test_deb: all passed"
