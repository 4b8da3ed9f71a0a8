#!/usr/bin/env bash
# The main job on the GPU machine, in one call: build, then `gpudissect run` (every probe),
# `gpudissect run latency`, `run atomics` and `run frontend` again (repeatability), and every probe through
# OpenCL.
# Everything comes back under $OUT: out.tar.gz (results, SASS of the chase kernels, logs).
source "$(dirname "${BASH_SOURCE[0]}")/device_setup.sh"
awk '/Function : .*(chase|clock_kernel)/{p=1} /Function : /{if($0 !~ /(chase|clock_kernel)/) p=0} p' \
  /tmp/gd/sass_full.txt > /tmp/gd/sass_chase.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
quiet() { grep -v "point [0-9]* of" >&2; }
t1=$(date +%s)
timeout 300 ./build/gpudissect run --device cuda:0 --out-dir /tmp/gd/results/all --no-html \
  2> >(tee /tmp/gd/progress_all.log | quiet)
echo "exit: $? (full run: $(( $(date +%s) - t1 )) s)"
timeout 120 ./build/gpudissect run latency --device cuda:0 --out-dir /tmp/gd/results/latency2 --no-html \
  2> >(tee /tmp/gd/progress_latency2.log | quiet) > /dev/null
echo "exit: $?"
for p in atomics frontend; do
  timeout 120 ./build/gpudissect run $p --device cuda:0 --out-dir /tmp/gd/results/${p}2 --no-html \
    2> >(tee /tmp/gd/progress_${p}2.log | quiet) > /dev/null
  echo "exit ($p again): $?"
done
ocl=$(timeout 60 ./build/gpudissect list | awk '/^opencl:/ && /NVIDIA/ {print $1; exit}')
if [ -n "$ocl" ]; then
  timeout 200 ./build/gpudissect run --device "$ocl" --out-dir /tmp/gd/results/opencl --no-html \
    2> >(tee /tmp/gd/progress_ocl.log | quiet) > /dev/null
  echo "exit: $?"
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
gzip -c /tmp/gd/sass_full.txt > /tmp/gd/sass_full.txt.gz
cp -r ~/.cache/gpudissect/frontend /tmp/gd/frontend_sass 2>/dev/null
(cd /tmp/gd && tar czf "$OUT/out.tar.gz" results sass_chase.txt sass_full.txt.gz progress*.log $(cd /tmp/gd && ls -d frontend_sass 2>/dev/null))
