#!/usr/bin/env bash
# The GPU machine's own CPU through PoCL (its opencl CPU device): the bandwidth probe's rules
# for CPU devices (issue 11: device memory from the curves, non-temporal stores, the host
# memory probe beside them) on a second CPU, full run and --quick. Output: $OUT/log.txt and
# $OUT/cpu.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/device_setup.sh"
lscpu | grep -E "Model name|^CPU\(s\)|L1d|L2|L3|Hypervisor"
cpu=$(timeout 60 ./build/gpudissect list 2>/dev/null | awk '/^opencl:/ && tolower($0) ~ /cpu/ {print $1; exit}')
if [[ -z $cpu ]]; then
  echo "no OpenCL CPU device:"; ./build/gpudissect list; exit 0
fi
for mode in full quick; do
  args=()
  [[ $mode == quick ]] && args=(--quick)
  t1=$(date +%s)
  timeout 240 ./build/gpudissect run "${args[@]}" --device "$cpu" --out-dir /tmp/gd/results/cpu_$mode \
    --no-html > /tmp/gd/cpu_$mode.txt 2> /tmp/gd/progress_cpu_$mode.log
  echo "exit (cpu $mode): $? ($(( $(date +%s) - t1 )) s)"
  sed -n '1,3p;/^Bandwidth probe/,/host link/p;/^Host memory/,/^$/p' /tmp/gd/cpu_$mode.txt
  grep -E "memory past|points in" /tmp/gd/progress_cpu_$mode.log
done
(cd /tmp/gd && tar czf "$OUT/cpu.tar.gz" results/cpu_* cpu_*.txt progress_cpu_*.log)
