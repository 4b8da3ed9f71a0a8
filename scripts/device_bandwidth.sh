#!/usr/bin/env bash
# Build and run the bandwidth probe on the GPU machine in one call (see ../shared/DEVICE.md).
# Usage: scripts/device_bandwidth.sh [extra args for `gpudissect run bandwidth`]
# Everything comes back under $OUT: out.tar.gz (results, SASS, logs) and log.txt.
source "$(dirname "${BASH_SOURCE[0]}")/device_setup.sh"
# The timed loops: every bandwidth kernel's body.
awk '/Function : /{p = ($0 ~ /bw_/)} p' /tmp/gd/sass_full.txt > /tmp/gd/sass_bw.txt
cp /tmp/gd/sass_bw.txt "$OUT/sass_bw.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
t1=$(date +%s)
timeout ${GD_RUN_TIMEOUT:-150} ./build/gpudissect run bandwidth --device cuda:0 --out-dir /tmp/gd/results/cuda --no-html "$@" \
  2> >(tee /tmp/gd/progress.log | grep -v "point [0-9]* of" >&2)
echo "exit: $? wall: $(( $(date +%s) - t1 )) s"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
# The OpenCL backend on the same GPU, through NVIDIA's OpenCL driver.
if [ -z "${GD_NO_OPENCL:-}" ]; then
  ocl=$(timeout 60 ./build/gpudissect list | awk '/^opencl:/ && /NVIDIA/ {print $1; exit}')
  if [ -n "$ocl" ]; then
    timeout ${GD_OCL_TIMEOUT:-90} ./build/gpudissect run bandwidth --device "$ocl" --out-dir /tmp/gd/results/opencl --no-html \
      2> >(tee /tmp/gd/progress_ocl.log | grep -v "point [0-9]* of" >&2)
    echo "exit: $?"
  fi
fi
(cd /tmp/gd && tar czf "$OUT/out.tar.gz" results sass_bw.txt progress*.log)
