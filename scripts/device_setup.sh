# Sourced by every scripts/device_*.sh. The GPU machine starts bare, so each call unpacks
# the carried Debian packages (.devdeps), registers NVIDIA's OpenCL driver, and builds
# (../shared/DEVICE.md). Afterwards: $OUT is set and receives a copy of all output in
# log.txt, build/gpudissect is built, and /tmp/gd/sass_full.txt holds its SASS.
set -uo pipefail
OUT=${OUT:-/tmp/gd-out}
mkdir -p "$OUT" /tmp/gd/results
exec > >(tee "$OUT/log.txt") 2>&1
for f in .devdeps/*.deb; do dpkg -x "$f" /opt/devdeps; done
# With the Vulkan packages carried (scripts/device_vulkan.sh lists them) the build links the
# Vulkan backend, so the binary needs libvulkan.so.1 at run time.
source "$(dirname "${BASH_SOURCE[0]}")/device_vulkan_loader.sh"
if compgen -G ".devdeps/libvulkan1_*.deb" > /dev/null; then
  bring_vulkan_loader
fi
mkdir -p /tmp/ocl && echo libnvidia-opencl.so.1 > /tmp/ocl/nvidia.icd
export OCL_ICD_VENDORS=/tmp/ocl
t0=$(date +%s)
cmake -B build -DCMAKE_PREFIX_PATH=/opt/devdeps/usr -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DGD_BUILD_TESTS=OFF > /tmp/gd/cmake.log 2>&1 \
  || { tail -30 /tmp/gd/cmake.log; exit 1; }
cmake --build build -j 16 > /tmp/gd/build.log 2>&1 || { grep -E "error" -A3 /tmp/gd/build.log | head -60; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
cuobjdump --dump-sass build/gpudissect > /tmp/gd/sass_full.txt 2>&1
