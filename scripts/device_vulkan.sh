#!/usr/bin/env bash
# The Vulkan run on the GPU machine (issue 13), in one call: unpack the carried Debian
# packages, bring the Vulkan loader, build with the Vulkan backend (no CUDA: not needed
# here, and the build is faster), `gpudissect list`, then `gpudissect run` (every probe) on
# the NVIDIA GPU through Vulkan. Everything comes back as $OUT/out.tar.gz (results, the
# progress log, the device listing) and $OUT/log.txt.
#
# Needs in .devdeps (carried; `apt-get download` on Debian 12, see README "Vulkan"):
#   glslang-tools   glslangValidator, statically linked against glslang (needs only libc
#                   and libstdc++): compiles the shaders at build time
#   libvulkan-dev   vulkan/vulkan.h and the libvulkan.so link
#   libvulkan1 libglvnd0 libegl1 libopengl0 libgl1 libglx0 libgles2
#                   the loaders the device README's verified Vulkan recipe unpacks to / in
#                   every run (NVIDIA's ICD lives in libGLX_nvidia, which needs glvnd)
# plus what every device build needs (DEVICE.md: CLI11, nlohmann-json, OpenCL headers).
set -uo pipefail
OUT=${OUT:-/tmp/gd-out}
mkdir -p "$OUT" /tmp/gd/results
exec > >(tee "$OUT/log.txt") 2>&1

source "$(dirname "${BASH_SOURCE[0]}")/device_vulkan_loader.sh"
for p in glslang-tools libvulkan-dev "${vulkan_loaders[@]}" libcli11-dev nlohmann-json3-dev; do
  compgen -G ".devdeps/${p}_*.deb" >/dev/null || { echo "FAILED: .devdeps has no ${p}_*.deb"; exit 1; }
done
for f in .devdeps/*.deb; do dpkg -x "$f" /opt/devdeps; done
bring_vulkan_loader
ldconfig -p | grep -q 'libvulkan.so.1 ' || { echo "FAILED: no libvulkan.so.1 after unpacking the loader"; exit 1; }
echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}"
[[ -n ${VK_DRIVER_FILES:-} ]] && cat "$VK_DRIVER_FILES"
/opt/devdeps/usr/bin/glslangValidator --version | head -1 || { echo "FAILED: glslangValidator does not run"; exit 1; }

t0=$(date +%s)
cmake -B build-vulkan -DCMAKE_PREFIX_PATH=/opt/devdeps/usr -DGD_WITH_CUDA=OFF -DGD_BUILD_TESTS=OFF \
  > /tmp/gd/cmake.log 2>&1 || { tail -30 /tmp/gd/cmake.log; exit 1; }
grep "gpudissect" /tmp/gd/cmake.log
grep -q "gpudissect backends:.*vulkan" /tmp/gd/cmake.log || { echo "FAILED: Vulkan backend not configured"; exit 1; }
cmake --build build-vulkan -j 16 > /tmp/gd/build.log 2>&1 || { grep -E "error" -A3 /tmp/gd/build.log | head -60; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"

GD=./build-vulkan/gpudissect
$GD --version
timeout 60 $GD list | tee /tmp/gd/list.txt
dev=$(awk '/^vulkan:/ && /NVIDIA|H200|H100/ {print $1; exit}' /tmp/gd/list.txt)
if [[ -z $dev ]]; then
  echo "FAILED: no NVIDIA device through Vulkan; the ICD's library and what it needs:"
  lib=$(sed -n 's/.*"library_path": *"\([^"]*\)".*/\1/p' "${VK_DRIVER_FILES:-/dev/null}")
  [[ -n $lib ]] && ldd "$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')" 2>&1 | grep -i "not found"
  (cd /tmp/gd && tar czf "$OUT/out.tar.gz" list.txt cmake.log)
  exit 1
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
quiet() { grep -v "point [0-9]* of" >&2; }
t1=$(date +%s)
timeout 400 $GD run --device "$dev" --out-dir /tmp/gd/results/vulkan --no-html \
  2> >(tee /tmp/gd/progress_vulkan.log | quiet)
echo "exit: $? (full run through Vulkan: $(( $(date +%s) - t1 )) s)"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
(cd /tmp/gd && tar czf "$OUT/out.tar.gz" results list.txt progress_vulkan.log)
