#!/usr/bin/env bash
# Build and measure on the GPU machine in one call (see ../shared/DEVICE.md).
# Usage: scripts/device_run.sh [extra args for `gpudissect run`]
# Everything comes back under $OUT: out.tar.gz (results, SASS, logs) and log.txt.
source "$(dirname "${BASH_SOURCE[0]}")/device_setup.sh"
# The timed loops: every chase kernel's body.
awk '/Function : .*(chase|clock_kernel)/{p=1} /Function : /{if($0 !~ /(chase|clock_kernel)/) p=0} p' \
  /tmp/gd/sass_full.txt > /tmp/gd/sass_chase.txt
cp /tmp/gd/sass_chase.txt "$OUT/sass_chase.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
timeout 30 ./build/gpudissect --version
timeout 60 ./build/gpudissect list
for run in 1 2; do
  timeout ${GD_RUN_TIMEOUT:-200} ./build/gpudissect run latency --device cuda:0 --out-dir /tmp/gd/results/run$run --no-html "$@" 2> >(tee /tmp/gd/progress$run.log | grep -v "point [0-9]* of" >&2)
  echo "exit: $?"
  tail -5 /tmp/gd/progress$run.log
done
# The OpenCL backend on the same GPU, through NVIDIA's OpenCL driver.
ocl=$(timeout 60 ./build/gpudissect list | awk '/^opencl:/ && /NVIDIA/ {print $1; exit}')
if [ -n "$ocl" ]; then
  timeout ${GD_RUN_TIMEOUT:-200} ./build/gpudissect run latency --device "$ocl" --out-dir /tmp/gd/results/opencl --no-html 2> >(tee /tmp/gd/progress_ocl.log | grep -v "point [0-9]* of" >&2)
  echo "exit: $?"
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
(cd /tmp/gd && tar czf "$OUT/out.tar.gz" results sass_chase.txt progress*.log)
