#!/usr/bin/env bash
# compare on one GPU through several backends, from the command line (issue 23, point 3): the
# cross-backend mode chosen on its own or by flag, the parity table, their CSV and JSON, the
# ids ok on one side only, exit codes and bad input (exit 2 naming the file and the field).
# Reads tests/fixtures/backends/ (committed runs cut down: make_backends.py); no device.
# Usage: bash tests/cli/test_compare_backends.sh path/to/gpudissect
# Prints "ok - NAME" or "not ok - NAME" per check, then "N passed, M failed"; exits 1 when
# any check failed.
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
FX=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fixtures/backends" && pwd)
T=60

gd_setup test_compare_backends.sh gd-xbackend "${1:-}"

C100=$FX/h100-cuda.json
O100=$FX/h100-opencl.json
C200=$FX/h200-cuda.json
O200=$FX/h200-opencl.json
V200=$FX/h200-vulkan.json

# ---- the mode, chosen on its own
check "two backends of one GPU: cross-backend mode on its own, exit 0" 0 \
  "Cross-backend comparison of one GPU (same device name" \
  "16 ids ok in both: 8 within the tolerance, 8 differ" "Differ beyond the tolerance (8):" \
  "compute.sfu.rsqrt.latency" "MUFU.RSQ x128" "x2.34" -- compare "$C100" "$O100"
check "an id ok on one side only is listed with the other side's status" 0 \
  "compute.fp16x2.fma                    ok in [1] only (132 TFLOP/s); [2]: unsupported: the device lacks cl_khr_fp16" \
  "latency.global.L2                     ok in [2] only (147.2 ns); [1]: absent" \
  -- compare "$C100" "$O100"
check "--tolerance widens what agrees" 0 "16 ids ok in both: 9 within the tolerance, 7 differ" \
  -- compare "$C100" "$O100" --tolerance 6%
check "-v lists the figures within the tolerance too" 0 "Within the tolerance (8):" \
  -- compare "$C100" "$O100" -v
check "--side-by-side keeps the table" 0 "Inputs (ratios are to [1]" "!Cross-backend" \
  -- compare "$C100" "$O100" --side-by-side
check "two GPUs of different names: the table, not the cross-backend mode" 0 \
  "Inputs (ratios are to [1]" "!Cross-backend" -- compare "$C100" "$V200"
check "--cross-backend forces it for two GPUs, and says they differ" 0 \
  "Cross-backend comparison of two different GPUs" -- compare "$C100" "$V200" --cross-backend
check "the same backend twice: the table" 0 "Inputs (ratios are to [1]" -- compare "$C100" "$C200"
check "with a --reference: the table" 0 "Inputs (ratios are to [1]" "GTX 980 Ti" \
  -- compare "$C200" "$V200" --reference "GTX 980 Ti"

# ---- outputs
check "--csv and --json written" 0 "wrote: $tmp/x.csv $tmp/x.json" \
  -- compare "$C100" "$O100" --csv "$tmp/x.csv" --json "$tmp/x.json"
if grep -q '^compute.fp16x2.fma,.*,compute,only_first,TFLOP/s,' "$tmp/x.csv" &&
  grep -q '^latency.global.L2,.*,only_second,' "$tmp/x.csv" &&
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["format"]=="gpudissect-cross-backend" and d["counts"]["differs"]==8 and d["counts"]["only_second"]==3' "$tmp/x.json"; then
  ok "the CSV lists the one-sided ids, the JSON counts"
else
  not_ok "the CSV lists the one-sided ids, the JSON counts"
fi
check "-o writes the side-by-side page" 0 "wrote: $tmp/x.html" -- compare "$C100" "$O100" -o "$tmp/x.html"
[[ -s $tmp/x.html ]] && ok "the page exists" || not_ok "the page exists"

# ---- parity
check "--parity: per probe, totals, exit 0" 0 "probe      CUDA  OpenCL  Vulkan  OpenCL common  OpenCL agree  OpenCL in step  Vulkan common  Vulkan agree  Vulkan in step" \
  "compute       6       4       5              4             2               0              5             1               0" \
  "all          23      18      16             15             6               0             15             3               0" \
  -- compare --parity "$C200" "$O200" "$V200"
check "--parity --markdown" 0 "| **all** | **23** | **18** | **16** | **15** | **6** | **0** | **15** | **3** | **0** |" \
  -- compare --parity "$C200" "$O200" "$V200" --markdown
check "--parity --csv --json" 0 "wrote: $tmp/p.csv $tmp/p.json" \
  -- compare --parity "$C200" "$O200" "$V200" --csv "$tmp/p.csv" --json "$tmp/p.json"
if grep -q '^all,3,NVIDIA H200,vulkan,16,15,3,0$' "$tmp/p.csv" &&
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["total"]["agree"]==[None,6,3] and d["total"]["in_step"]==[None,0,0]' "$tmp/p.json"; then
  ok "the parity CSV and JSON hold the totals"
else
  not_ok "the parity CSV and JSON hold the totals"
fi
check "--parity of another GPU names it in a note" 0 "note: [2] NVIDIA H100 80GB HBM3 is not the GPU of [1]" \
  -- compare --parity "$C200" "$O100"

# ---- bad input: exit 2, naming the file and the field
python3 - "$O100" "$tmp/nobackend.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["device"]["backend"] = ""; json.dump(d, open(sys.argv[2], "w"))
PY
python3 - "$O100" "$tmp/badbackend.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["device"]["backend"] = ["opencl"]; json.dump(d, open(sys.argv[2], "w"))
PY
check "--parity: a run without device.backend, exit 2 naming file and field" 2 \
  "$tmp/nobackend.json: device.backend is empty" -- compare --parity "$C100" "$tmp/nobackend.json"
check "--cross-backend: the same, exit 2" 2 "$tmp/nobackend.json: device.backend is empty" \
  -- compare "$C100" "$tmp/nobackend.json" --cross-backend
check "a backend that is not text, exit 2 naming the field" 2 "$tmp/badbackend.json" "device" \
  -- compare "$C100" "$tmp/badbackend.json"
check "--parity with one file, exit 2" 2 "--parity needs two or more result files" -- compare --parity "$C100"
check "--parity with -o, exit 2" 2 "--parity writes no page" -- compare --parity "$C100" "$O100" -o "$tmp/p.html"
check "--parity with --reference, exit 2" 2 "--reference cannot be combined with --parity" \
  -- compare --parity "$C100" "$O100" --reference "GTX 980 Ti"
check "--markdown without --parity, exit 2" 2 "--markdown needs --parity" -- compare "$C100" "$O100" --markdown
check "--json in the side-by-side table, exit 2" 2 "--json needs --parity or a cross-backend comparison" \
  -- compare "$C100" "$C200" --json "$tmp/t.json"
check "--tolerance in the side-by-side table, exit 2" 2 "--tolerance needs --baseline" \
  -- compare "$C100" "$C200" --tolerance 3%
check "malformed --tolerance in cross-backend mode, exit 2" 2 "--tolerance: '3x'" \
  -- compare "$C100" "$O100" --tolerance 3x
check "--cross-backend with three files, exit 2" 2 "--cross-backend compares exactly two result files" \
  -- compare "$C100" "$O100" "$C200" --cross-backend
check "--cross-backend and --side-by-side, exit 2" 2 "exclude each other" \
  -- compare "$C100" "$O100" --cross-backend --side-by-side
check "--parity with --baseline, exit 2" 2 "cannot be combined with --baseline" \
  -- compare "$C100" --baseline "$C100" --parity
check "--help says how cross-backend mode is chosen" 0 "Cross-backend mode is chosen on its own" \
  "--cross-backend" "--side-by-side" "--parity" "--markdown" -- compare --help

gd_finish
