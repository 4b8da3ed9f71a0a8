#!/usr/bin/env bash
# `gpudissect run --quick` on the GPU machine, twice (the first run also fills the compile
# caches a fresh machine lacks, the second is what a fleet health check sees), each checked
# against a committed full run with `compare --baseline` (issue 11: within 3 %).
# Usage: scripts/device_quick.sh results/nvidia-h200/nvidia-h200.json
source "$(dirname "${BASH_SOURCE[0]}")/device_setup.sh"
full=${1:?usage: device_quick.sh FULL_RUN_JSON}
for i in 1 2; do
  t1=$(date +%s.%N)
  timeout 120 ./build/gpudissect run --quick --device cuda:0 --out-dir /tmp/gd/results/quick$i --no-html \
    > /tmp/gd/quick$i.txt 2> /tmp/gd/progress_quick$i.log
  echo "exit: $? (quick run $i: $(python3 -c "print(round($(date +%s.%N) - $t1, 1))") s)"
  ./build/gpudissect compare --baseline "$full" /tmp/gd/results/quick$i/*.json --tolerance 3% -v \
    > /tmp/gd/results/quick$i/baseline.txt 2>&1
  echo "baseline exit: $?"
done
tail -5 /tmp/gd/progress_quick2.log
(cd /tmp/gd && tar czf "$OUT/out.tar.gz" results quick*.txt progress*.log)
