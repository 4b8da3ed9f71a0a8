#!/usr/bin/env bash
# Tests of the gpudissect command line: exit codes, messages, output files, the report
# from a committed fixture, a real run on the first OpenCL device (PoCL on the CPU in CI)
# and Ctrl-C.
# Usage: GD_FIXTURES=tests/fixtures bash tests/cli/test_cli.sh path/to/gpudissect
# Prints "ok - NAME" or "not ok - NAME" per check, then "N passed, M failed";
# exits 1 when any check failed.
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
FIX=${GD_FIXTURES:-$(dirname "${BASH_SOURCE[0]}")/../fixtures}
[[ -d $FIX ]] && FIX=$(cd "$FIX" && pwd)
SAMPLE=$FIX/h200_latency_sample.json
T=120  # no command may take longer than this

gd_setup test_cli.sh gd-cli "${1:-}"

if [[ ! -x $GD ]]; then
  echo "not ok - gpudissect binary exists: $GD"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "# binary: $GD"
echo "# fixtures: $FIX"

# An OpenCL device to run on: the checks that measure are skipped without one.
have_ocl=0
why_no_ocl=""
if ! command -v clinfo >/dev/null 2>&1; then
  why_no_ocl="clinfo is not installed"
elif timeout 60 clinfo -l 2>/dev/null | grep -q "Device #"; then
  have_ocl=1
else
  why_no_ocl="clinfo -l shows no OpenCL device"
fi

# ---------------------------------------------------------------- version and help
check "--version: exit 0, names the backends and NVML" 0 "backends:" "NVML" -- --version
gd --version
if [[ $rc == 0 ]] && grep -qE '^backends: .*(cuda|opencl)' "$tmp/out"; then
  ok "--version: at least one backend built ($(grep '^backends:' "$tmp/out"))"
else
  not_ok "--version: at least one backend built" "expected a line 'backends: ...' naming cuda or opencl"
fi

check "--help: exit 0, lists the subcommands and --version" 0 "list" "run" "report" "--version" -- --help
check "run --help: exit 0, documents the key options" 0 \
  "--device" "--path" "--max-footprint" "-o,--output" "--out-dir" "--repeats" "-q,--quiet" -- run --help
check "report --help: exit 0, documents -o" 0 "-o,--output" "--csv-dir" -- report --help

# ---------------------------------------------------------------- list
if ((have_ocl)); then
  check "list: exit 0, lists opencl:0.0" 0 "opencl:0.0" -- list
else
  skip "list: exit 0, lists opencl:0.0" "$why_no_ocl"
fi

# ---------------------------------------------------------------- bad input: exit 2
check "unknown probe: exit 2, names the valid probes" 2 \
  "nosuchprobe" "valid probes" "latency" -- run nosuchprobe
check "unknown probe in a comma list: exit 2, names it" 2 \
  "unknown probe 'nosuchprobe'" "valid probes" -- run latency,nosuchprobe
check "unknown path: exit 2, names the valid paths" 2 \
  "nosuch" "valid paths" "global" "local" -- run latency --path nosuch
check "unknown path in a list: exit 2" 2 "valid paths" -- run latency --path global,nosuch

gd run latency --device cuda:99
if [[ $rc == 2 ]] && err_has "cuda:99" && { err_has "valid devices" || err_has "without the CUDA backend"; }; then
  ok "unknown device cuda:99: exit 2, names the valid devices"
else
  not_ok "unknown device cuda:99: exit 2, names the valid devices" \
    "expected exit code 2 and a message naming cuda:99 and the valid devices"
fi
if ((have_ocl)); then
  check "unknown device opencl:9.9: exit 2, names the valid devices" 2 \
    "opencl:9.9" "valid devices" "opencl:0.0" -- run latency --device opencl:9.9
  check "malformed device: exit 2, gives the forms and the valid devices" 2 \
    "bogus" "cuda:N" "opencl:P.D" "opencl:0.0" -- run latency --device bogus
else
  check "unknown device opencl:9.9: exit 2, names the valid devices" 2 \
    "opencl:9.9" -- run latency --device opencl:9.9
  check "malformed device: exit 2, gives the forms" 2 \
    "bogus" "cuda:N" "opencl:P.D" -- run latency --device bogus
fi
check "bad size --max-footprint 12Q: exit 2, says what a size is" 2 \
  "--max-footprint" "12Q" "not a size" -- run latency --max-footprint 12Q
check "bad size --min-footprint: exit 2" 2 "--min-footprint" -- run latency --min-footprint abc
check "--max-footprint below --min-footprint: exit 2" 2 "--max-footprint" -- \
  run latency --min-footprint 1M --max-footprint 64K
check "--repeats out of range: exit 2" 2 "--repeats" -- run latency --repeats 0
check "unknown subcommand: exit 2, names it and the valid commands" 2 "frobnicate" "list, run, report" -- frobnicate
check "unknown option: exit 2, names it, points to --help" 2 "--frob" "--help" -- --frob
check "unknown run option: exit 2, names it, points to --help" 2 "--frob" "--help" -- run --frob
check "report without a file: exit 2" 2 "file" -- report
gd
if [[ $rc == 2 ]] && has "list" && has "run" && has "report"; then
  ok "no subcommand: exit 2 and the help"
else
  not_ok "no subcommand: exit 2 and the help" "expected exit code 2 and the usage naming list, run, report"
fi
# None of the above may have measured anything or left files behind.
left=$(find "$tmp" -mindepth 1 -maxdepth 1 ! -name out ! -name err -printf '%f ')
if [[ -z $left ]]; then
  ok "bad input writes no files"
else
  not_ok "bad input writes no files" "found: $left"
fi

# ---------------------------------------------------------------- busy or throttled GPUs
# (issue 25, item 7) Without a GPU: the help documents --require-idle and its exit 5; on
# PoCL (no NVML) the GPU state is "unknown", said, and --require-idle does not refuse it
# (unknown is not shared); a saved result whose gpu_state says shared opens the terminal
# summary with the warning and the HTML report with a banner, and its figures stay as they
# were (ids, statuses) with a suspect note.
check "run --help: documents --require-idle and exit 5" 0 "--require-idle" "5 --require-idle" \
  "gpu_state" -- run --help
check "fleet --help: documents busy (another process) and exit 4" 0 "--require-idle" \
  "busy (another process)" "4 none of those" -- fleet --help
if ! command -v python3 >/dev/null 2>&1; then
  skip "gpu_state" "python3 is not installed"
else
  busy_dir=$tmp/busy
  mkdir -p "$busy_dir"
  python3 - "$SAMPLE" "$busy_dir/shared.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["gpu_state"] = {"verdict": "shared", "samples": [
    {"probe": "latency", "when": "start", "known": True, "utilization_percent": 97,
     "processes": [{"pid": 4242, "name": "matmul_loop", "kind": "compute"}],
     "throttle_reasons": ["sw_power_cap"]},
    {"probe": "latency", "when": "after", "known": True, "utilization_percent": 100,
     "processes": [{"pid": 4242, "name": "matmul_loop", "kind": "compute"}],
     "throttle_reasons": ["sw_power_cap"]}]}
j.pop("figures", None)  # derived on loading, and marked
json.dump(j, open(sys.argv[2], "w"))
PY
  gd report "$busy_dir/shared.json" -o "$busy_dir/shared.html" --json "$busy_dir/back.json"
  first=$(head -1 "$tmp/out")
  if [[ $rc == 0 && $first == WARNING:*SHARED*THROTTLED*4242\ \(matmul_loop\)* ]]; then
    ok "report: a shared GPU is the summary's first line"
  else
    not_ok "report: a shared GPU is the summary's first line" "first line: $first"
  fi
  if grep -q 'class="gpu-state" role="alert"' "$busy_dir/shared.html" 2>/dev/null &&
    grep -q 'matmul_loop' "$busy_dir/shared.html"; then
    ok "report: a shared GPU is a banner in the HTML"
  else
    not_ok "report: a shared GPU is a banner in the HTML" "no gpu-state banner naming matmul_loop"
  fi
  if msg=$(python3 - "$SAMPLE" "$busy_dir/back.json" <<'PY' 2>&1
import json, sys
sys.path.insert(0, "")
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
bad = []
if b.get("schema_version") != 3: bad.append(f"schema_version {b.get('schema_version')}")
st = b.get("gpu_state") or {}
if st.get("verdict") != "shared+throttled": bad.append(f"verdict {st.get('verdict')!r}")
figs = b.get("figures") or []
if not figs: bad.append("no figures")
if any(not f.get("suspect") for f in figs): bad.append("a figure without suspect")
if "figures" in a:
    ids_a = [(f["id"], f.get("status")) for f in a["figures"]]
    ids_b = [(f["id"], f.get("status")) for f in figs]
    if ids_a != ids_b: bad.append("ids or statuses changed")
for x in bad: print(x)
sys.exit(1 if bad else 0)
PY
  ); then
    ok "report --json: gpu_state kept, every figure suspect, ids and statuses unchanged"
  else
    not_ok "report --json: gpu_state kept, every figure suspect, ids and statuses unchanged" "$msg"
  fi
  if ((have_ocl)); then
    gd run latency --device opencl:0.0 --path global --max-footprint 64K --repeats 3 --hops 1024 \
      --require-idle --no-html -q --out-dir "$busy_dir/ocl" -o "$busy_dir/ocl.json"
    verdict=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("gpu_state",{}).get("verdict"))' \
      "$busy_dir/ocl.json" 2>/dev/null)
    if [[ $rc == 0 && $verdict == unknown ]] && err_has "GPU state unknown" &&
      out_has "GPU state: unknown"; then
      ok "run --require-idle on OpenCL (no NVML): state unknown, said, not refused"
    else
      not_ok "run --require-idle on OpenCL (no NVML): state unknown, said, not refused" \
        "want exit 0, verdict unknown and the note; got verdict $verdict"
    fi
  else
    skip "run --require-idle on OpenCL (no NVML): state unknown, said, not refused" "$why_no_ocl"
  fi
fi

# ---------------------------------------------------------------- Vulkan (lavapipe in CI)
# Where the Vulkan backend is built: it lists its devices as vulkan:N, refuses an unknown
# one with exit 2, and measures on vulkan:0 (a small latency + bandwidth + compute run): the
# compute figures in ops/s with no per-clock figure (no clock there), what has no GLSL
# version unsupported with the reason, the host link measured one direction at a time (both
# at once unsupported without a transfer queue), and the front end's launch latency and rate
# (its other parts unsupported with the reason). GD_REQUIRE_VULKAN=1
# (CI) makes a build without it, or no device, a failure instead of a skip.
gd --version
if grep -qE '^backends: .*vulkan' "$tmp/out"; then
  gd list
  if grep -q '^vulkan:0 ' "$tmp/out"; then
    ok "list: exit 0, lists vulkan:0 ($(grep -A1 '^vulkan:0 ' "$tmp/out" | tail -1 | sed 's/^ *//'))"
    check "unknown device vulkan:9: exit 2, names the valid devices" 2 \
      "vulkan:9" "valid devices" "vulkan:0" -- run latency --device vulkan:9
    vk_dir=$tmp/vk
    # The chase to 8 MiB with 5 repeats: lavapipe's loop costs ~7 ns a hop, which hides its
    # L1 and L2 from each other, and to 1 MiB with 3 repeats a CI machine found no level at
    # all; past 2 MiB memory (~150 ns) stands clear of any noise (~2.5 s).
    check "run latency bandwidth compute frontend on vulkan:0: exit 0" 0 "wrote:" -- \
      run latency bandwidth compute frontend --device vulkan:0 --path global,shared \
      --max-footprint 8M --repeats 5 --hops 4096 --option bandwidth.quick=1 \
      --option bandwidth.max_footprint=2M --option bandwidth.budget=4 \
      --option compute.ops=fp32.fma,int32.add,sfu.rsqrt,bf16x2.fma --option compute.ms=0.2 \
      --option frontend.launches=20 --option frontend.rate_kernels=200 --out-dir "$vk_dir" \
      --no-html
    vk_json=$(ls "$vk_dir"/*.json 2>/dev/null | head -1)
    if [[ -n $vk_json ]] && python3 - "$vk_json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
bad = []
if j["device"]["backend"] != "vulkan": bad.append("device.backend is not vulkan")
p = j["probes"]
g = p["latency"]["paths"]["global"]
if g["status"] != "ok" or not g["levels"]: bad.append("global path: no levels")
if p["latency"]["paths"]["shared"]["status"] != "ok": bad.append("shared path not ok")
if p["bandwidth"]["status"] != "ok": bad.append("bandwidth not ok: %r" % p["bandwidth"]["status"])
c = p["compute"]
if c["status"] != "ok": bad.append("compute not ok: %r" % c["status"])
ops = {f["op"]: f for f in c.get("table", [])}
for op in ("fp32.fma", "int32.add", "sfu.rsqrt"):
    f = ops.get(op, {})
    # No clock on the Vulkan compute path: ops/s and ns, per clock unknown (absent, not 0).
    if f.get("status") != "ok" or not f.get("ops_per_s", {}).get("median", 0) > 0:
        bad.append("compute %s: want ok with a positive rate, got %r" % (op, f))
    elif "ops_per_clk_sm" in f or f.get("clock_source") != "none" or "latency_ns" not in f:
        bad.append("compute %s: want no per-clock figure, clock_source none, latency_ns" % op)
    elif not f.get("instruction", "").startswith("SPIR-V Op"):
        bad.append("compute %s: instruction %r is no SPIR-V op" % (op, f.get("instruction")))
# GLSL has no bfloat16: unsupported, the reason naming the limit.
r = ops.get("bf16x2.fma", {})
if r.get("status") != "unsupported" or "GLSL" not in r.get("reason", "") or "yet" in r.get("reason", ""):
    bad.append("compute bf16x2.fma: want unsupported with a reason naming GLSL, got %r" % r)
# The host link: one direction at a time measured (checked points, positive GB/s, a note on
# what was timed); both at once needs a dedicated transfer queue, which lavapipe lacks.
host = p["bandwidth"].get("host", {})
for name in ("h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"):
    c = host.get(name, {})
    pts = [q for q in c.get("points", []) if q.get("status") == "ok"]
    if c.get("status") != "ok" or not c.get("note") or not pts or \
            not all(q["gbps"]["median"] > 0 for q in pts) or \
            any(q.get("status") == "error" for q in c.get("points", [])):
        bad.append("bandwidth host %s: want ok, checked points with positive GB/s and a note, "
                   "got %r" % (name, c))
for name in ("both_pinned", "both_pageable"):
    c = host.get(name, {})
    if c.get("status") == "unsupported" and "transfer queue" not in c.get("reason", ""):
        bad.append("bandwidth host %s: unsupported without the transfer-queue reason" % name)
    elif c.get("status") not in ("ok", "unsupported"):
        bad.append("bandwidth host %s: status %r" % (name, c.get("status")))
# The front end: launch latency and the plain rate measured, the rest unsupported.
fe = p["frontend"]
la = fe.get("launch", {})
if fe["status"] != "ok" or la.get("status", {}).get("status") != "ok" or \
        not la.get("round_trip_us", {}).get("median", 0) > 0 or \
        not la.get("rates", {}).get("plain", {}).get("kernels_per_s", {}).get("median", 0) > 0:
    bad.append("frontend: want ok with a launch round trip and a plain rate, got %r" % fe)
for part in ("icache", "dispatch", "occupancy"):
    st = fe.get(part, {}).get("status", {})
    if st.get("status") != "unsupported" or not st.get("reason"):
        bad.append("frontend %s: want unsupported with a reason, got %r" % (part, st))
for f in j.get("figures", []):
    if f["id"].startswith("bandwidth.") and f["status"] == "ok" and not f["value"]["median"] > 0:
        bad.append("figure %s is not positive" % f["id"])
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
    then
      ok "vulkan:0 run: JSON names the backend, global levels found, compute measured (ops/s, no per-clock), host link and launches measured"
    else
      not_ok "vulkan:0 run: JSON names the backend, global levels found, compute measured (ops/s, no per-clock), host link and launches measured" \
        "json: ${vk_json:-none written}"
    fi
  elif [[ ${GD_REQUIRE_VULKAN:-0} == 1 ]]; then
    not_ok "list: exit 0, lists vulkan:0" "GD_REQUIRE_VULKAN=1 but no Vulkan device is listed"
  else
    skip "list: exit 0, lists vulkan:0" "no Vulkan device (install mesa-vulkan-drivers)"
  fi
elif [[ ${GD_REQUIRE_VULKAN:-0} == 1 ]]; then
  not_ok "--version: the Vulkan backend is built" "GD_REQUIRE_VULKAN=1 but --version names no vulkan"
else
  skip "the Vulkan backend" "not built"
fi

# ---------------------------------------------------------------- unwritable outputs
# They must fail before measuring: no progress line about a point, no device opened.
touch "$tmp/regular"
unwritable() {  # NAME BAD_PATH ARGS...: the message must name BAD_PATH (when a device exists)
  local name=$1 bad=$2
  shift 2
  gd "$@"
  local why=()
  [[ $rc == 2 ]] || why+=("expected exit code 2 (bad input), got $rc")
  grep -qiE "error|cannot" "$tmp/err" || why+=("expected an error message on stderr")
  if ((have_ocl)) || [[ $1 == report ]]; then
    err_has "$bad" || why+=("expected the message to name $bad")
  fi
  ! grep -qE "point [0-9]+ of" "$tmp/err" || why+=("it measured before failing (progress lines about points)")
  if ((${#why[@]} == 0)); then ok "$name"; else not_ok "$name" "${why[@]}"; fi
}
dev_args=()
((have_ocl)) && dev_args=(--device opencl:0.0)
unwritable "run -o /proc/nope/x.json: fails before measuring" /proc/nope/x.json \
  run latency "${dev_args[@]}" --path global --max-footprint 2M --repeats 3 --out-dir "$tmp/u1" -o /proc/nope/x.json
unwritable "run -o under a regular file: fails before measuring" "$tmp/regular/x.json" \
  run latency "${dev_args[@]}" --path global --max-footprint 2M --repeats 3 --out-dir "$tmp/u2" -o "$tmp/regular/x.json"
unwritable "run --out-dir under a regular file: fails before measuring" "$tmp/regular/sub" \
  run latency "${dev_args[@]}" --path global --max-footprint 2M --repeats 3 --out-dir "$tmp/regular/sub"
unwritable "report -o under a regular file: fails" "$tmp/regular/r.html" report "$SAMPLE" -o "$tmp/regular/r.html"

# ---------------------------------------------------------------- report from the fixture
if [[ ! -f $SAMPLE ]]; then
  not_ok "fixture exists" "missing $SAMPLE (is GD_FIXTURES set?)"
else
  gd report "$SAMPLE" -o "$tmp/r.html"
  why=()
  [[ $rc == 0 ]] || why+=("expected exit code 0, got $rc")
  if [[ -s $tmp/r.html ]]; then
    grep -qF "NVIDIA H200" "$tmp/r.html" || why+=("r.html does not contain 'NVIDIA H200'")
    grep -qF "L2" "$tmp/r.html" || why+=("r.html does not contain 'L2'")
    grep -qiF "<html" "$tmp/r.html" || why+=("r.html has no <html> element")
  else
    why+=("r.html was not written")
  fi
  out_has "device memory" || why+=("the summary on stdout does not contain 'device memory'")
  out_has "NVIDIA H200" || why+=("the summary on stdout does not name the device")
  if ((${#why[@]} == 0)); then ok "report on the H200 fixture: HTML and summary"; else not_ok "report on the H200 fixture: HTML and summary" "${why[@]}"; fi
  rm -f "$tmp/r.html"

  # Malformed inputs: exit 2, a clear message, no HTML.
  printf 'this is not JSON\n' >"$tmp/bad.json"
  printf '[1, 2, 3]\n' >"$tmp/array.json"
  sed 's/"schema_version": *1\b/"schema_version": 99/' "$SAMPLE" >"$tmp/v99.json"
  if ! grep -q '"schema_version": *99' "$tmp/v99.json"; then
    not_ok "report: schema_version 99 fixture prepared" "could not rewrite schema_version in $SAMPLE"
  fi
  check "report on a file that is not JSON: exit 2" 2 "bad.json" "not valid JSON" -- report "$tmp/bad.json" -o "$tmp/x.html"
  check "report on schema_version 99: exit 2, names schema_version" 2 "schema_version" "99" -- report "$tmp/v99.json" -o "$tmp/x.html"
  # A version-1 file written back as the current schema, with the figures this version derives.
  check "report --json: writes the current schema" 0 "wrote:" -- report "$SAMPLE" -o "$tmp/v2.html" --json "$tmp/v2.json"
  if python3 -c "
import json, sys
j = json.load(open('$tmp/v2.json'))
ids = [f['id'] for f in j.get('figures', [])]
sys.exit(0 if j.get('schema_version') == 3 and 'latency.global.L1' in ids else 1)"; then
    ok "report --json: current schema (3) with derived figures (latency.global.L1)"
  else
    not_ok "report --json: current schema (3) with derived figures (latency.global.L1)" "$tmp/v2.json lacks them"
  fi
  check "report on a JSON array: exit 2, says it is not a result" 2 "array.json" "not a gpudissect result" -- report "$tmp/array.json" -o "$tmp/x.html"
  check "report on a missing file: exit 2" 2 "nosuchfile.json" -- report "$tmp/nosuchfile.json" -o "$tmp/x.html"
  if [[ -e $tmp/x.html ]]; then
    not_ok "malformed report inputs write no HTML" "found $tmp/x.html"
  else
    ok "malformed report inputs write no HTML"
  fi
fi

# ---------------------------------------------------------------- a real run on OpenCL
# Checks a result JSON with python3; prints the problems, exits 1 when there are any.
check_json() {  # FILE MODE(ok|interrupted)
  python3 - "$@" <<'PY'
import json, sys
path, mode = sys.argv[1], sys.argv[2]
bad = []
try:
    with open(path) as f:
        j = json.load(f)
except Exception as e:
    print(f"cannot load {path}: {e}"); sys.exit(1)

def get(o, *keys):
    for k in keys:
        if not isinstance(o, dict) or k not in o:
            return None
        o = o[k]
    return o

def keys_named(o, name, where=""):
    """Every path to a key called `name`, at any depth."""
    found = []
    if isinstance(o, dict):
        for k, v in o.items():
            if k == name: found.append(f"{where}.{k}")
            found += keys_named(v, name, f"{where}.{k}")
    elif isinstance(o, list):
        for i, v in enumerate(o):
            found += keys_named(v, name, f"{where}[{i}]")
    return found

if j.get("schema_version") != 3: bad.append(f"schema_version is {j.get('schema_version')!r}, want 3")
if get(j, "tool", "name") != "gpudissect": bad.append(f"tool.name is {get(j, 'tool', 'name')!r}")
if get(j, "device", "backend") != "opencl": bad.append(f"device.backend is {get(j, 'device', 'backend')!r}")
lat = get(j, "probes", "latency")
if not isinstance(lat, dict):
    bad.append("no probes.latency object")
    lat = {}
status = lat.get("status")
if status != mode: bad.append(f"probes.latency.status is {status!r}, want {mode!r}")
ws = lat.get("wall_seconds")
if not isinstance(ws, (int, float)) or not ws > 0: bad.append(f"probes.latency.wall_seconds is {ws!r}, want > 0")
g = get(lat, "paths", "global")
if not isinstance(g, dict):
    bad.append("no probes.latency.paths.global")
    g = {}
pts = g.get("points") or []
fps = [p.get("footprint_bytes") for p in pts]
if mode == "ok":
    if g.get("status") != "ok": bad.append(f"paths.global.status is {g.get('status')!r}, want 'ok'")
    if not pts: bad.append("paths.global has no points")
    elif fps[0] != 1024: bad.append(f"the first global footprint is {fps[0]}, want 1024")
    elif fps[-1] != 2 * 1024 * 1024: bad.append(f"the last global footprint is {fps[-1]}, want 2 MiB = 2097152")
    levels = g.get("levels") or []
    if not levels: bad.append("paths.global has no levels")
    lat_ns = [l.get("latency_ns") for l in levels]
    if any(not isinstance(x, (int, float)) for x in lat_ns):
        bad.append(f"a level has no latency_ns: {lat_ns}")
    elif any(b <= a for a, b in zip(lat_ns, lat_ns[1:])):
        bad.append(f"levels' latency_ns not increasing: {lat_ns}")
else:
    if not pts: bad.append("the interrupted run wrote no global point")
if any(not isinstance(f, int) for f in fps): bad.append(f"a point has no integer footprint_bytes")
elif any(b <= a for a, b in zip(fps, fps[1:])): bad.append(f"global footprints not strictly increasing: {fps}")
for p in pts:
    ns = p.get("ns")
    if not isinstance(ns, (int, float)) or not ns > 0:
        bad.append(f"global point at {p.get('footprint_bytes')} B has ns={ns!r}, want > 0"); break
# OpenCL has no cycle counter: the points must not carry invented cycles.
cyc = []
for name, path_ in (get(lat, "paths") or {}).items():
    for i, p in enumerate(path_.get("points") or []):
        cyc += keys_named(p, "cycles", f"paths.{name}.points[{i}]")
if cyc: bad.append(f"'cycles' in OpenCL points ({len(cyc)}x), e.g. {cyc[0]}")
for b in bad: print(b)
sys.exit(1 if bad else 0)
PY
}

if ! command -v python3 >/dev/null 2>&1; then
  skip "run on OpenCL" "python3 is not installed"
elif ((!have_ocl)); then
  skip "run on OpenCL: latency global,local to 2M" "$why_no_ocl"
  skip "run on OpenCL: Ctrl-C" "$why_no_ocl"
else
  run_dir=$tmp/run
  gd run latency --device opencl:0.0 --path global,local --max-footprint 2M --repeats 3 --hops 4096 --out-dir "$run_dir" -q
  if [[ $rc == 0 ]]; then ok "run on OpenCL: exit 0"; else not_ok "run on OpenCL: exit 0" "expected exit code 0, got $rc"; fi
  why=()
  for f in latency.json latency_global.csv latency.html; do
    [[ -s $run_dir/$f ]] || why+=("$run_dir/$f was not written")
  done
  if ((${#why[@]} == 0)); then ok "run on OpenCL: writes latency.json, latency_global.csv, latency.html"; else not_ok "run on OpenCL: writes latency.json, latency_global.csv, latency.html" "${why[@]}" "written: $(find "$run_dir" -mindepth 1 -printf '%f ' 2>/dev/null)"; fi
  if [[ -s $run_dir/latency.json ]]; then
    if msg=$(check_json "$run_dir/latency.json" ok 2>&1); then
      ok "run on OpenCL: JSON content (schema, device, status, points, levels, no cycles)"
    else
      mapfile -t lines <<<"$msg"
      not_ok "run on OpenCL: JSON content (schema, device, status, points, levels, no cycles)" "${lines[@]}"
    fi
  else
    not_ok "run on OpenCL: JSON content (schema, device, status, points, levels, no cycles)" "no JSON"
  fi
  if out_has "global" && out_has "local"; then
    ok "run on OpenCL: terminal summary on stdout names the paths"
  else
    not_ok "run on OpenCL: terminal summary on stdout names the paths" "expected 'global' and 'local' on stdout"
  fi
  if [[ ! -s $tmp/err ]] || ! grep -qE "point [0-9]+ of" "$tmp/err"; then
    ok "run on OpenCL: -q prints no progress lines"
  else
    not_ok "run on OpenCL: -q prints no progress lines" "stderr has progress lines"
  fi

  # Ctrl-C: the program must stop, write what it measured, and exit 130.
  # Enough hops that the run lasts well past the interrupt on any machine.
  int_dir=$tmp/int
  last_cmd="gpudissect run latency --device opencl:0.0 --path global --max-footprint 256M --hops 65536 --out-dir $int_dir"
  "$GD" run latency --device opencl:0.0 --path global --max-footprint 256M --hops 65536 \
    --out-dir "$int_dir" >"$tmp/out" 2>"$tmp/err" </dev/null &
  bg_pid=$!
  sleep 1.5
  # SIGINT only once it measures: before its handler is installed, a background job of a
  # non-interactive shell ignores SIGINT. Wait for "point 2 of" so one point is complete.
  for _ in $(seq 1 600); do
    grep -qE "point ([2-9]|[1-9][0-9]+) of" "$tmp/err" 2>/dev/null && break
    kill -0 "$bg_pid" 2>/dev/null || break
    sleep 0.2
  done
  why=()
  stop_bg INT
  [[ $rc == 130 ]] || why+=("expected exit code 130, got $rc")
  if ((${#why[@]} == 0)); then ok "Ctrl-C: exit 130"; else not_ok "Ctrl-C: exit 130" "${why[@]}"; fi
  if [[ -s $int_dir/latency.json ]]; then
    if msg=$(check_json "$int_dir/latency.json" interrupted 2>&1); then
      ok "Ctrl-C: JSON written, status interrupted, points kept"
    else
      mapfile -t lines <<<"$msg"
      not_ok "Ctrl-C: JSON written, status interrupted, points kept" "${lines[@]}"
    fi
  else
    not_ok "Ctrl-C: JSON written, status interrupted, points kept" "$int_dir/latency.json was not written"
  fi
  if err_has "interrupted"; then ok "Ctrl-C: says it was interrupted"; else not_ok "Ctrl-C: says it was interrupted" "expected 'interrupted' on stderr"; fi

  # SIGTERM (kill, Slurm, container runtimes) is treated like Ctrl-C, and the JSON is written
  # after every probe: the latency probe that finished is kept whole when the run is
  # terminated during the bandwidth probe. Exit 143 (128 + SIGTERM). The sweep reaches 256 KiB:
  # to 64 KiB a CPU's L1 edge was the curve's last step, and a loaded machine's noise could
  # leave it without a level (no latency figure to find).
  term_dir=$tmp/term
  last_cmd="gpudissect run latency bandwidth --device opencl:0.0 --path global --max-footprint 256K --out-dir $term_dir"
  "$GD" run latency bandwidth --device opencl:0.0 --path global --max-footprint 256K --repeats 3 \
    --hops 4096 --option bandwidth.parts=footprint,host --out-dir "$term_dir" >"$tmp/out" 2>"$tmp/err" </dev/null &
  bg_pid=$!
  for _ in $(seq 1 $((T * 5))); do
    grep -qE "bandwidth" "$tmp/err" 2>/dev/null && break
    kill -0 "$bg_pid" 2>/dev/null || break
    sleep 0.2
  done
  why=()
  stop_bg TERM
  [[ $rc == 143 ]] || why+=("expected exit code 143, got $rc")
  json=$term_dir/latency+bandwidth.json
  if [[ -s $json ]]; then
    msg=$(python3 - "$json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
bad = []
p = j.get("probes", {})
if p.get("latency", {}).get("status") != "ok": bad.append("latency status is %r, want ok" % p.get("latency", {}).get("status"))
if p.get("bandwidth", {}).get("status") not in ("interrupted",): bad.append("bandwidth status is %r, want interrupted" % p.get("bandwidth", {}).get("status"))
ids = [f.get("id") for f in j.get("figures", [])]
if not any(i and i.startswith("latency.global.") for i in ids): bad.append("no latency.global.* figure in %r" % ids[:5])
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
)
    [[ $? == 0 ]] || why+=("$msg")
  else
    why+=("$json was not written")
  fi
  if ((${#why[@]} == 0)); then ok "SIGTERM: exit 143, finished probe kept whole, figures written"; else not_ok "SIGTERM: exit 143, finished probe kept whole, figures written" "${why[@]}"; fi
fi

# ---------------------------------------------------------------- compare, baseline, reference
# (issue 10) On the committed H200 result: no GPU needed.
H200=$FIX/h200_run.json
if [[ ! -f $H200 ]]; then
  skip "compare: committed H200 result" "$H200 not found"
else
  # doctor IN OUT EDIT: a copy of a result with EDIT applied (python, d = the document).
  doctor() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
  }
  # The DRAM read 10 % worse, in the probe's data and (schema 2) in the figures list.
  doctor "$H200" "$tmp/worse.json" '
for f in d["probes"]["bandwidth"]["figures"]:
    if f["name"] == "device memory read":
        for k in ("median", "q1", "q3", "min", "max"): f["gbps"][k] *= 0.9
for f in d.get("figures", []):
    if f["id"] == "bandwidth.dram.read":
        for k in ("median", "q1", "q3", "min", "max"): f["value"][k] *= 0.9
'
  doctor "$H200" "$tmp/failed.json" '
for f in d["probes"]["compute"]["table"]:
    if f["op"] == "fp32.fma": f["status"] = "error"; f["reason"] = "doctored: check failed"
d.get("figures", []) and [f.update(status="error") for f in d["figures"] if f["id"] == "compute.fp32.fma"]
'
  doctor "$H200" "$tmp/fewer.json" '
d["probes"]["compute"]["table"] = [f for f in d["probes"]["compute"]["table"] if f["op"] != "fp64.fma"]
d["figures"] = [f for f in d.get("figures", []) if not f["id"].startswith("compute.fp64.fma")] if "figures" in d else None
if d["figures"] is None: del d["figures"]
'
  unset GD_REFERENCE_DIR
  check "compare --baseline: the H200 result against itself, no regression, exit 0" 0 "no regression" \
    -- compare "$H200" --baseline "$H200" --tolerance 3%
  check "compare --baseline: DRAM read 10% worse, exit 3 naming the figure" 3 "REGRESSION" "bandwidth.dram.read" \
    -- compare "$tmp/worse.json" --baseline "$H200" --tolerance 3%
  if ! grep -q "latency.global.L1 " "$tmp/out"; then ok "compare --baseline: only the worse figure regressed"; else
    not_ok "compare --baseline: only the worse figure regressed" "latency.global.L1 listed"; fi
  check "compare --baseline: 10% worse passes a 15% tolerance" 0 "no regression" \
    -- compare "$tmp/worse.json" --baseline "$H200" --tolerance 15%
  check "compare --baseline: a figure failed in the new run, ok in the baseline, exit 3" 3 "compute.fp32.fma" "failed" \
    -- compare "$tmp/failed.json" --baseline "$H200"
  check "compare --baseline: a figure the new run lacks fails the gate (exit 3)" 3 "compute.fp64.fma" "missing" \
    -- compare "$tmp/fewer.json" --baseline "$H200" --tolerance 3%
  check "compare --baseline --allow-missing: it is listed, not a failure (exit 0)" 0 "compute.fp64.fma" "missing" \
    -- compare "$tmp/fewer.json" --baseline "$H200" --tolerance 3% --allow-missing
  check "compare --baseline: --csv writes the verdicts" 3 -- compare "$tmp/worse.json" --baseline "$H200" --tolerance 3% --csv "$tmp/verdicts.csv"
  if grep -q "^bandwidth.dram.read,.*,regressed," "$tmp/verdicts.csv" 2>/dev/null; then ok "compare --baseline: CSV marks the regression"; else
    not_ok "compare --baseline: CSV marks the regression" "no 'bandwidth.dram.read ... regressed' line in $tmp/verdicts.csv"; fi
  check "compare --baseline: -o writes the page with the verdicts" 3 -- compare "$tmp/worse.json" --baseline "$H200" --tolerance 3% -o "$tmp/verdicts.html"
  if grep -q "Against the baseline" "$tmp/verdicts.html" 2>/dev/null && grep -q "bandwidth.dram.read" "$tmp/verdicts.html"; then
    ok "compare --baseline: the page lists the regression"; else not_ok "compare --baseline: the page lists the regression"; fi
  check "compare --baseline: malformed --tolerance, exit 2" 2 "--tolerance" -- compare "$H200" --baseline "$H200" --tolerance 3x
  check "compare: one input is not a comparison, exit 2" 2 "two or more inputs" -- compare "$H200"
  check "compare: a missing file, exit 2 naming it" 2 "cannot read $tmp/nope.json" -- compare "$tmp/nope.json" "$H200"
  echo '{"schema_version": 1' >"$tmp/broken.json"
  check "compare: a malformed JSON, exit 2" 2 "not valid JSON" -- compare "$H200" "$tmp/broken.json"
  check "compare: unknown reference, exit 2 naming the valid ones" 2 "unknown reference GPU 'GTX 9800'" "GTX 980 Ti" "Tesla K80" \
    -- compare "$H200" --reference "GTX 9800"
  check "compare: references matched case-insensitively, columns say backend, SMs and clock" 0 \
    "GTX 980 Ti" "Tesla K80" "reference, 22 SMs, 1328 MHz" "cuda, 132 SMs, " "MHz (measured)" \
    -- compare "$H200" --reference "gtx 980 ti" --reference "TESLA K80" -o "$tmp/vs.html" --csv "$tmp/vs.csv"
  if [[ -s $tmp/vs.html ]] && grep -q "per SM per clock" "$tmp/vs.html" && grep -q "^latency.shared.shared.cycles," "$tmp/vs.csv"; then
    ok "compare: HTML and CSV written, the shared-memory latency row compares the H200 with the seeds"
  else
    not_ok "compare: HTML and CSV written, the shared-memory latency row compares the H200 with the seeds"
  fi
  check "reference list: the GPUs with their sources" 0 "GTX 980 Ti" "GTX 680" "Tesla K80" "R9 390" "HD 7950" \
    "RTX PRO 6000 Blackwell" "RX 9070" "Apple M1" "Apple M2" "shared/seeds/" -- reference list
  check "reference show: a GPU's figures with their sources" 0 "latency.shared.shared.cycles" "Maxwell" -- reference show "gtx 980 ti"
  check "reference show: unknown name, exit 2" 2 "valid names" -- reference show "nope"
  GD_REFERENCE_DIR=$tmp/nowhere timeout "$T" "$GD" compare "$H200" --reference "GTX 980 Ti" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  if [[ $rc == 2 ]] && err_has "does not exist"; then ok "reference: a GD_REFERENCE_DIR that does not exist is exit 2"; else
    not_ok "reference: a GD_REFERENCE_DIR that does not exist is exit 2" "exit $rc"; fi
  # Ten files (distinct copies) with every chart, within 5 s of CPU time: gpudissect's and
  # the gnuplot runs' user + system time (bash's `time` counts every waited-for descendant),
  # which a test running beside this one on the other core does not inflate the way it does
  # the wall time (here 0.43 s of CPU took 0.8-1.7 s of wall time at load 10 on 2 cores). The
  # wall time is bounded too, at 4x that (a rendering that waits or sleeps still fails).
  files=()
  for i in 0 1 2 3 4 5 6 7 8 9; do cp "$H200" "$tmp/run$i.json"; files+=("$tmp/run$i.json"); done
  TIMEFORMAT='%R %U %S'
  { time gd compare "${files[@]}" -o "$tmp/ten.html" --csv "$tmp/ten.csv"; } 2>"$tmp/time"
  unset TIMEFORMAT
  read -r wall_ms cpu_ms < <(awk '{ printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000 }' "$tmp/time")
  if [[ $rc == 0 && -s $tmp/ten.html ]] && ((cpu_ms <= 5000 && wall_ms <= 20000)); then
    ok "compare: ten files rendered in $cpu_ms ms of CPU (<= 5 s), $wall_ms ms of wall time (<= 20 s)"
  else
    not_ok "compare: ten files rendered in <= 5 s of CPU, <= 20 s of wall time" \
      "took $cpu_ms ms of CPU, $wall_ms ms of wall time, exit $rc"
  fi
fi

# ---------------------------------------------------------------- links on OpenCL
# The links probe measures through CUDA only: on an OpenCL device the run succeeds and the
# probe, its parts and every links figure are `unsupported` with a reason (never a 0).
if ! command -v python3 >/dev/null 2>&1; then
  skip "run links on OpenCL: unsupported with a reason" "python3 is not installed"
elif ((!have_ocl)); then
  skip "run links on OpenCL: unsupported with a reason" "$why_no_ocl"
else
  links_dir=$tmp/links
  gd run links --device opencl:0.0 --out-dir "$links_dir" -q
  links_rc=$rc
  if [[ $links_rc == 0 ]] && msg=$(python3 - "$links_dir/links.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
bad = []
l = j.get("probes", {}).get("links")
if l is None:
    bad.append("no probes.links in the JSON")
else:
    if l.get("status") != "unsupported": bad.append(f"links status {l.get('status')!r}, not unsupported")
    if "no links kernels" not in l.get("reason", ""): bad.append(f"links reason {l.get('reason')!r}")
    for part in ("p2p", "host", "nccl"):
        if l.get(part, {}).get("status") != "unsupported": bad.append(f"links.{part} is not unsupported")
figs = [f for f in j.get("figures", []) if f["id"].startswith("links.")]
if not any(f["id"] == "links.p2p.ce.read" for f in figs): bad.append("no links.p2p.ce.read figure")
for f in figs:
    if f.get("status") != "unsupported" or not f.get("reason") or "value" in f:
        bad.append(f"figure {f['id']}: status {f.get('status')!r}, reason {f.get('reason')!r}, value {f.get('value')!r}")
print("; ".join(bad[:5]))
sys.exit(1 if bad else 0)
PY
  ) && out_has "Links (0 GPUs): unsupported"; then
    ok "run links on OpenCL: exit 0, the probe and its figures unsupported with a reason"
  else
    not_ok "run links on OpenCL: exit 0, the probe and its figures unsupported with a reason" \
      "exit $links_rc" "${msg:-the summary lacks 'Links (0 GPUs): unsupported'}"
  fi
fi

gd_finish
