#!/usr/bin/env bash
# The memory probe on the GPU machine, in one call: build, then `gpudissect run memory` twice
# (the second run checks that every figure repeats), each with its own output folder under
# /tmp/gd/results. Everything comes back under $OUT: out.tar.gz (results, the memory kernels'
# SASS, progress logs) and log.txt.
source "$(dirname "${BASH_SOURCE[0]}")/device_setup.sh"
awk '/Function : .*mem_chase/{p=1} /Function : /{if($0 !~ /mem_chase/) p=0} p' \
  /tmp/gd/sass_full.txt > /tmp/gd/sass_memory.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
quiet() { grep -v "point [0-9]* of" >&2; }
for run in 1 2; do
  t1=$(date +%s)
  timeout 240 ./build/gpudissect run memory --device cuda:0 --out-dir /tmp/gd/results/memory$run \
    2> >(tee /tmp/gd/progress_memory$run.log | quiet)
  echo "exit (memory run $run): $? ($(( $(date +%s) - t1 )) s)"
done
# The two runs' figures side by side (the second against the first, 3 % tolerance).
./build/gpudissect compare /tmp/gd/results/memory2/memory.json \
  --baseline /tmp/gd/results/memory1/memory.json --tolerance 3% -v \
  --csv /tmp/gd/results/memory_repeat.csv
echo "exit (compare): $?"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
(cd /tmp/gd && tar czf "$OUT/out.tar.gz" results sass_memory.txt progress_memory*.log)
