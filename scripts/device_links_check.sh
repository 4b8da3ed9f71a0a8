#!/usr/bin/env bash
# Second links lease on nvidia-h200-x2: the links probe again (repeatability), NCCL's own
# choices logged (NCCL_DEBUG=INFO), a torch.distributed all-reduce on the same machine as a
# reference, and the peer chase at several footprints. NCCL_NVLS_ENABLE=0 throughout.
source "$(dirname "${BASH_SOURCE[0]}")/device_setup.sh"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export GD_NCCL_LIBRARY=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2
nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
t1=$(date +%s)
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING timeout 180 ./build/gpudissect run links --device cuda:0 \
  --out-dir /tmp/gd/results/links2 > /tmp/gd/links2.txt 2> /tmp/gd/progress_links2.log
echo "exit (links 2): $? ($(( $(date +%s) - t1 )) s)"
grep -E "NCCL INFO (Channel|Connected|comm |.*nChannels|.*Algo|.*algorithm|.*Tuning|.*P2P|.*CUMEM|.*NVLS)" /tmp/gd/progress_links2.log | sort | uniq -c | sort -rn | head -25
for fp in 64K 2M 64M 1G; do
  timeout 60 ./build/gpudissect run links --device cuda:0 --option links.parts=latency \
    --option links.chase_footprint=$fp --out-dir /tmp/gd/results/chase_$fp --no-html \
    > /tmp/gd/chase_$fp.txt 2>/dev/null
  echo "chase footprint $fp: exit $?"; grep -A3 "load latency" /tmp/gd/chase_$fp.txt | head -4
done
(cd /tmp/gd && tar czf "$OUT/out.tar.gz" results ./*.txt progress*.log)
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING timeout 150 python3 scripts/nccl_reference.py > /tmp/gd/torch_ref.txt 2>&1
echo "exit (torch reference): $?"
grep -E "NCCL INFO (Channel|.*nChannels|.*CUMEM|.*P2P)" /tmp/gd/torch_ref.txt | sort | uniq -c | sort -rn | head -15
grep "^torch" /tmp/gd/torch_ref.txt
nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
(cd /tmp/gd && tar czf "$OUT/out.tar.gz" results ./*.txt progress*.log)
grep -v "^wrote:" /tmp/gd/links2.txt | sed -n '/peer to peer/,/host links/p'
