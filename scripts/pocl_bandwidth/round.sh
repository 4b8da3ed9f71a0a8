#!/bin/bash
# PoCL vs host probe, one round. Run from the repo root after building build dirs NEW and OLD.
# One round at 256 MiB: PoCL through the tool (NEW build dir), the host probe, PoCL through the OLD build dir.
NEW=${NEW:-/work/build-pocl-bw}; OLD=${OLD:-/work/build-main}
# Prints: label read write copy
fig() { for f in read write copy; do cut -d, -f3 $1/bandwidth_footprint-$f.csv | sed -n 2p; done | tr '\n' ' '; }
hfig() { for f in read write copy; do cut -d, -f3 $1/host_memory_$f.csv | sed -n 2p; done | tr '\n' ' '; }
BW="run bandwidth --device opencl:0.0 --option bandwidth.parts=footprint --option bandwidth.min_footprint=256M --option bandwidth.max_footprint=256M --option bandwidth.large=1K -q --no-html"
l0=$(cut -d' ' -f1 /proc/loadavg)
$NEW/gpudissect $BW --out-dir /tmp/m/r_new >/dev/null 2>&1; echo "new  $(fig /tmp/m/r_new) load $l0"
$NEW/gpudissect run host --option host.min_footprint=256M --option host.max_footprint=256M -q --no-html --out-dir /tmp/m/r_host >/dev/null 2>&1; echo "host $(hfig /tmp/m/r_host) load $(cut -d' ' -f1 /proc/loadavg)"
if [ -z "$NOOLD" ]; then $OLD/gpudissect $BW --out-dir /tmp/m/r_old >/dev/null 2>&1; echo "old  $(fig /tmp/m/r_old) load $(cut -d' ' -f1 /proc/loadavg)"; fi
