#!/usr/bin/env bash
# The links probe and a 2-rank fleet on the 2-GPU machine (device kind nvidia-h200-x2), in
# one call (<= 10 min: build, links <= 180 s, fleet <= 240 s): build (device_setup.sh), find
# NCCL in the image's Python packages (the nvidia-nccl wheel; the CUDA toolkit has none),
# `gpudissect run links` over both GPUs
# with NCCL_NVLS_ENABLE=0 (the probe sets it too: no NVLink multicast objects, ever), then
# `mpirun -n 2 gpudissect fleet --profile quick`. Everything comes back as $OUT/out.tar.gz
# and $OUT/log.txt. Not yet run on a GPU (written by reading, 2026-11-23).
source "$(dirname "${BASH_SOURCE[0]}")/device_setup.sh"
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=index,name,pci.bus_id,clocks.sm,clocks.mem,power.draw,temperature.gpu,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current --format=csv
nvidia-smi topo -m
nvidia-smi nvlink -s 2>&1 | head -40

# NCCL: the libnccl.so.2 of the Python packages (nvidia/nccl/lib/ in a site-packages).
nccl=""
sites=$(python3 -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()] + sys.path))' 2>/dev/null | sort -u)
for d in $sites; do
  [[ -d $d ]] || continue
  nccl=$(find "$d" -maxdepth 5 -name 'libnccl.so.2' 2>/dev/null | head -1)
  [[ -n $nccl ]] && break
done
if [[ -z $nccl ]]; then  # anywhere else (slower)
  nccl=$(find / -xdev -name 'libnccl.so.2' -not -path '/proc/*' 2>/dev/null | head -1)
fi
if [[ -n $nccl ]]; then
  export GD_NCCL_LIBRARY=$nccl
  echo "NCCL: $nccl"
  python3 -c 'import importlib.metadata as m; print("nvidia-nccl wheel:", [d.version for d in m.distributions() if "nccl" in (d.metadata["Name"] or "").lower()])' 2>/dev/null
else
  echo "NCCL: no libnccl.so.2 found; the collectives will be unsupported"
fi

t1=$(date +%s)
timeout 180 ./build/gpudissect run links --device cuda:0 --out-dir /tmp/gd/results/links \
  > /tmp/gd/links.txt 2> /tmp/gd/progress_links.log
echo "exit (links): $? ($(( $(date +%s) - t1 )) s; target <= 60 s)"
grep -iE "error|timed out|nccl" /tmp/gd/progress_links.log | head -20
# What is there so far comes back even if the fleet outlives the call (the tar is redone at
# the end).
(cd /tmp/gd && tar czf "$OUT/out.tar.gz" results ./*.txt progress*.log)

# The fleet: one rank per GPU of this node, quick profile; exit 3 means a GPU was judged
# unhealthy (the page says why), not that the run failed.
mpi_root=()
[[ $(id -u) == 0 ]] && mpi_root=(--allow-run-as-root)
mkdir -p /tmp/gd/results/fleet
t1=$(date +%s)
fleet_out=(-o /tmp/gd/results/fleet/fleet.html --json /tmp/gd/results/fleet/fleet.json)
if grep -q "MPI not found" /tmp/gd/cmake.log; then  # built without MPI: local processes
  echo "fleet: the build found no MPI; running the 2 ranks as local processes"
  timeout 240 ./build/gpudissect fleet --profile quick --ranks 2 "${fleet_out[@]}" \
    > /tmp/gd/fleet.txt 2>&1
  echo "exit (fleet, --ranks 2): $? ($(( $(date +%s) - t1 )) s)"
else
  timeout 240 mpirun "${mpi_root[@]}" -n 2 ./build/gpudissect fleet --profile quick \
    "${fleet_out[@]}" > /tmp/gd/fleet.txt 2>&1
  echo "exit (fleet, mpirun -n 2): $? ($(( $(date +%s) - t1 )) s)"
fi
tail -40 /tmp/gd/fleet.txt

nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
(cd /tmp/gd && tar czf "$OUT/out.tar.gz" results ./*.txt progress*.log)
# The summary table last.
grep -v "^wrote:" /tmp/gd/links.txt
