#!/usr/bin/env bash
# Build and run the compute probe on the GPU machine in one call (see ../shared/DEVICE.md).
# Usage: scripts/device_compute.sh [extra args for `gpudissect run compute`]
# Everything comes back under $OUT: out.tar.gz (results, SASS, logs) and log.txt.
source "$(dirname "${BASH_SOURCE[0]}")/device_setup.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv
# The table alone (<= 60 s), then with the sweep (<= 3 min): cold disk cache both times
# for the first, warm for the second.
rm -rf ~/.cache/gpudissect
s=$(date +%s)
timeout ${GD_TABLE_TIMEOUT:-150} ./build/gpudissect run compute --device cuda:0 --out-dir /tmp/gd/results/table --no-html "$@" 2> /tmp/gd/progress_table.log
echo "exit: $? wall: $(( $(date +%s) - s )) s"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
if [ "${GD_SWEEP:-1}" = 1 ]; then
  s=$(date +%s)
  timeout ${GD_SWEEP_TIMEOUT:-150} ./build/gpudissect run compute --device cuda:0 --out-dir /tmp/gd/results/sweep --no-html --option compute.sweep=1 "$@" 2> /tmp/gd/progress_sweep.log > /tmp/gd/sweep_stdout.txt
  echo "sweep exit: $? wall: $(( $(date +%s) - s )) s"
fi
ocl=$(timeout 60 ./build/gpudissect list | awk '/^opencl:/ && /NVIDIA/ {print $1; exit}')
if [ -n "$ocl" ]; then
  timeout 60 ./build/gpudissect run compute --device "$ocl" --out-dir /tmp/gd/results/opencl --no-html > /tmp/gd/opencl_stdout.txt 2>&1
  echo "opencl exit: $?"; tail -25 /tmp/gd/opencl_stdout.txt
fi
cp ~/.cache/gpudissect/compute/*.sass /tmp/gd/ 2>/dev/null; mkdir -p /tmp/gd/sass && mv /tmp/gd/*.sass /tmp/gd/sass/ 2>/dev/null
(cd /tmp/gd && tar czf "$OUT/out.tar.gz" results sass progress*.log sweep_stdout.txt opencl_stdout.txt 2>/dev/null)
tail -40 /tmp/gd/progress_table.log | grep -v "^\s*$" | tail -8
