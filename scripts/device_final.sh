#!/usr/bin/env bash
# Everything one GPU lease must measure for the committed results, in one call (<= 10 min):
# build (CUDA, OpenCL and, with the Vulkan packages carried, Vulkan), the main job
# `gpudissect run` (every probe), `run atomics` and `run memory` again in new processes
# (repeatability), `run --quick` gated against this lease's full run (3 %), and every probe
# through Vulkan on the same GPU. Everything comes back as $OUT/out.tar.gz and $OUT/log.txt.
source "$(dirname "${BASH_SOURCE[0]}")/device_setup.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
quiet() { grep -v "point [0-9]* of" >&2; }
step() {  # step NAME TIMEOUT ARGS...: one gpudissect run, its progress kept, its time printed
  local name=$1 limit=$2
  shift 2
  local t1
  t1=$(date +%s)
  timeout "$limit" ./build/gpudissect "$@" --out-dir /tmp/gd/results/$name --no-html \
    > /tmp/gd/$name.txt 2> >(tee /tmp/gd/progress_$name.log | quiet)
  echo "exit ($name): $? ($(( $(date +%s) - t1 )) s)"
}
t1=$(date +%s); cuobjdump --dump-sass build/gpudissect > /dev/null 2>&1
echo "cuobjdump of the binary: $(( $(date +%s) - t1 )) s"
# --quick first, on a machine that has run nothing yet (no compiled-kernel cache): a
# newcomer's first quick run; then the full run, and --quick again after it.
step quick_cold 60 run --quick --device cuda:0
grep -E "wall time" /tmp/gd/quick_cold.txt
step all 300 run --device cuda:0
tail -n +1 /tmp/gd/all.txt | grep -v "^wrote:"
step atomics2 60 run atomics --device cuda:0
step memory2 120 run memory --device cuda:0
step quick 60 run --quick --device cuda:0
full=$(ls /tmp/gd/results/all/*.json | head -1)
for q in quick_cold quick; do
  ./build/gpudissect compare --baseline "$full" /tmp/gd/results/$q/*.json --tolerance 3% \
    > /tmp/gd/results/$q/baseline.txt 2>&1
  echo "exit ($q against full): $?"
  grep -E "wall time" /tmp/gd/$q.txt
  sed -n '/^REGRESSIONS/,/^Improvements/p' /tmp/gd/results/$q/baseline.txt
done
vk=$(timeout 60 ./build/gpudissect list 2>/dev/null | awk '/^vulkan:/ && /NVIDIA|H200|H100/ {print $1; exit}')
if [[ -n $vk ]]; then
  step vulkan 150 run --device "$vk"
  grep -v "^wrote:" /tmp/gd/vulkan.txt | head -60
else
  echo "no NVIDIA Vulkan device:"; ./build/gpudissect list
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
(cd /tmp/gd && tar czf "$OUT/out.tar.gz" results ./*.txt progress*.log)
