#!/usr/bin/env bash
# Shows, on a CUDA GPU with NVML, that gpudissect names a GPU another process uses (issue 25,
# item 7). Builds nothing: expects build/gpudissect; the foreign load is build/busy_load,
# else scripts/busy_load.cu compiled here with nvcc (into OUTDIR).
#   scripts/busy-check.sh OUTDIR        (about 60-80 s on an H100; GPU 0)
# Steps, each with its log and JSON in OUTDIR:
#   1. start the load (busy_load, a second process running FMA loops on every SM);
#   2. run --quick --require-idle       expect exit 5, nothing measured (refused.log);
#   3. run --quick                      expect exit 0, summary's first line a WARNING,
#                                       shared.json's gpu_state.verdict shared (or
#                                       shared+throttled), figures marked "suspect";
#   4. stop the load, wait for NVML's utilisation window to pass;
#   5. run latency --quick              expect exit 0, gpu_state.verdict idle (idle.json).
# OUTDIR/summary.txt says PASS or FAIL for each expectation; the script's exit status is the
# number of FAILs.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:?usage: scripts/busy-check.sh OUTDIR}
mkdir -p "$out"
gd=./build/gpudissect
[[ -x $gd ]] || { echo "busy-check: $gd not found (run scripts/build.sh first)" >&2; exit 100; }

load=./build/busy_load
if [[ ! -x $load ]]; then
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  load=$out/busy_load
  "$nvcc" -O2 -arch=sm_${GD_CUDA_ARCH:-90} -o "$load" scripts/busy_load.cu \
    || { echo "busy-check: cannot compile scripts/busy_load.cu" >&2; exit 100; }
fi

load_pid=""
stop_load() {
  if [[ -n $load_pid ]]; then
    kill -TERM "$load_pid" 2>/dev/null
    wait "$load_pid" 2>/dev/null
    load_pid=""
  fi
}
trap stop_load EXIT

t0=$(date +%s)
# 1. The load, for at most 85 s (it outlives no failed step: stop_load ends it).
"$load" 85 0 > "$out/load.log" 2>&1 &
load_pid=$!
for _ in $(seq 1 100); do  # until its first kernel has run (context up, GPU busy)
  grep -q "busy_load: running" "$out/load.log" 2>/dev/null && break
  kill -0 "$load_pid" 2>/dev/null || break
  sleep 0.1
done
sleep 1  # a full NVML utilisation period with the load alone
echo "load pid $load_pid: $(head -1 "$out/load.log")" > "$out/steps.log"

# 2. Refused: exit 5 before the first probe.
timeout 20 "$gd" run --quick --require-idle -d cuda:0 --out-dir "$out/refused" --no-html \
  > "$out/refused.txt" 2> "$out/refused.log"
echo "refused: exit $?" >> "$out/steps.log"

# 3. Measured beside the load: exit 0, flagged.
timeout 60 "$gd" run --quick -d cuda:0 --out-dir "$out/shared" -o "$out/shared.json" \
  > "$out/shared.txt" 2> "$out/shared.log"
echo "shared: exit $?" >> "$out/steps.log"

# 4. The load ends; NVML's utilisation is averaged over up to a second.
stop_load
sleep 2
echo "load stopped at $(( $(date +%s) - t0 )) s" >> "$out/steps.log"

# 5. Idle: the latency probe alone.
timeout 25 "$gd" run latency --quick -d cuda:0 --out-dir "$out/idle" -o "$out/idle.json" \
  > "$out/idle.txt" 2> "$out/idle.log"
echo "idle: exit $?" >> "$out/steps.log"
echo "total $(( $(date +%s) - t0 )) s" >> "$out/steps.log"

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, re, sys
out = sys.argv[1]
steps = open(os.path.join(out, "steps.log")).read()
def rc(name):
    m = re.search(rf"^{name}: exit (\d+)", steps, re.M)
    return int(m.group(1)) if m else None
def load(name):
    try:
        return json.load(open(os.path.join(out, name)))
    except Exception as e:
        return {"_error": str(e)}
fails = 0
def check(ok, what):
    global fails
    fails += not ok
    print(("PASS " if ok else "FAIL ") + what)
check(rc("refused") == 5, f"run --quick --require-idle exits 5 (got {rc('refused')})")
refused = open(os.path.join(out, "refused.log")).read()
check("busy_load" in refused or "other processes" in refused,
      "the refusal names the other process (refused.log)")
check(rc("shared") == 0, f"run --quick beside the load exits 0 (got {rc('shared')})")
s = load("shared.json")
st = s.get("gpu_state", {})
check(st.get("shared") is True, f"shared.json gpu_state.verdict = {st.get('verdict')!r} (shared)")
check(any(p.get("name", "").startswith("busy_load") for p in st.get("processes", [])),
      f"shared.json names busy_load among {st.get('processes')}")
first = open(os.path.join(out, "shared.txt")).readline()
check(first.startswith("WARNING"), f"summary's first line warns: {first.strip()[:100]!r}")
figs = s.get("figures", [])
check(figs and all(f.get("suspect") for f in figs),
      f"{sum(bool(f.get('suspect')) for f in figs)} of {len(figs)} figures marked suspect")
lat = s.get("probes", {}).get("latency", {}).get("paths", {}).get("global", {})
print(f"INFO shared global latency curve: status {lat.get('status')!r}, levels "
      f"{[(l.get('name'), l.get('latency_cycles')) for l in lat.get('levels', [])]}, "
      f"reason {lat.get('reason', '')!r}")
check(rc("idle") == 0, f"run latency --quick idle exits 0 (got {rc('idle')})")
i = load("idle.json")
ist = i.get("gpu_state", {})
check(ist.get("verdict") == "idle",
      f"idle.json gpu_state.verdict = {ist.get('verdict')!r} (idle); reasons {ist.get('reasons')}")
il = i.get("probes", {}).get("latency", {}).get("paths", {}).get("global", {})
print(f"INFO idle global latency curve: status {il.get('status')!r}, levels "
      f"{[(l.get('name'), l.get('latency_cycles')) for l in il.get('levels', [])]}")
print(steps.strip())
sys.exit(fails)
PY
