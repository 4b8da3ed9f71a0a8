#!/usr/bin/env bash
# Hostile and careless input on the command line (issue 25, items 3 to 5), no device needed:
# options that crashed or were accepted, result files nested a million deep, malformed
# values (each error names its key path, exit 2), and a baseline gate that a new file cannot
# argue with. scripts/test.sh runs it once more against the sanitizer build.
# Usage: bash tests/cli/test_input.sh path/to/gpudissect
# Prints "ok - NAME" or "not ok - NAME" per check, then "N passed, M failed"; exits 1 when
# any check failed.
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
H200=$REPO/results/nvidia-h200/nvidia-h200.json
T=60

gd_setup test_input.sh gd-input "${1:-}"
# Every check: never the JSON library's own text.
check_also() {
  grep -qF "json.exception" "$tmp/out" "$tmp/err" && why+=("the JSON library's raw text")
  return 0
}
# doctor OUT EDIT: a copy of the H200 result (schema 2, with its figures list) with EDIT
# applied (python; d = the document).
"$GD" report "$H200" -o "$tmp/h200.html" --json "$tmp/h200.json" >/dev/null 2>&1 ||
  { echo "not ok - the H200 result converts to schema 2"; exit 1; }
doctor() {
  python3 - "$tmp/h200.json" "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}

# ---- item 3: no crash ----
check "run --option bogus.key=1: exit 2 listing the probes" 2 "unknown probe 'bogus'" "valid probes: " "latency" \
  -- run --option bogus.key=1
check "run --option LATENCY.page=0: exit 2 (probe names are case-sensitive)" 2 "unknown probe 'LATENCY'" \
  -- run --option LATENCY.page=0
check "run --option .x=1: exit 2" 2 "unknown probe ''" -- run --option .x=1
python3 - "$tmp" <<'PY'
import sys
t = sys.argv[1]
head = '{"schema_version": 2, "tool": {}, "device": {"backend": "cuda", "name": "x"}, "probes": {"future": '
open(t + "/deep.json", "w").write(head + "[" * 1000000 + "]" * 1000000 + "}}")
open(t + "/deep30k.json", "w").write(head + "[" * 30000 + "]" * 30000 + "}}")
PY
check "report: a million nested lists under an unknown probe, exit 2" 2 "nested deeper than 64 levels" \
  -- report "$tmp/deep.json" -o "$tmp/deep.html"
check "compare: the same file, exit 2" 2 "nested deeper" -- compare "$tmp/deep.json" "$H200"
check "compare --baseline: as the baseline, exit 2" 2 "nested deeper" -- compare "$H200" --baseline "$tmp/deep.json"
check "fleet --baseline: as the baseline, exit 2" 2 "nested deeper" -- fleet --baseline "$tmp/deep.json" --ranks 1
check "report --json: 30,000 levels, exit 2" 2 "nested deeper" -- report "$tmp/deep30k.json" -o "$tmp/d.html" --json "$tmp/d.json"
if [[ ! -e $tmp/d.json ]]; then ok "report --json: nothing written for it"; else
  not_ok "report --json: nothing written for it" "$(stat -c %s "$tmp/d.json") bytes written"; fi

# ---- item 4: exit 2, naming the key path ----
doctor "$tmp/fig-string.json" 'd["figures"][12]["value"] = "fast"'
check "report: a figure's value is a string, exit 2 naming figures[12].value" 2 \
  "figures[12].value: expected a number or a summary, got a string" -- report "$tmp/fig-string.json" -o "$tmp/x.html"
check "compare --baseline: the same file, exit 2 naming the path" 2 "figures[12].value" \
  -- compare "$tmp/fig-string.json" --baseline "$H200"
doctor "$tmp/lat-string.json" 'd["probes"]["latency"]["paths"]["global"]["points"][0]["footprint_bytes"] = "1K"'
check "report: a latency point's footprint is a string, exit 2 naming its path" 2 \
  "probes.latency.paths.global.points[0].footprint_bytes: expected a number" -- report "$tmp/lat-string.json" -o "$tmp/x.html"
doctor "$tmp/lat-huge.json" 'd["probes"]["latency"]["paths"]["global"]["points"][0]["footprint_bytes"] = 4e97'
check "report: a latency point's footprint is 4e97, exit 2 naming its path" 2 \
  "probes.latency.paths.global.points[0].footprint_bytes: expected an integer from 0 to" -- report "$tmp/lat-huge.json" -o "$tmp/x.html"
doctor "$tmp/schema.json" 'd["schema_version"] = 4294967298'
check "report: schema_version 4294967298 is not version 2, exit 2" 2 "unknown schema_version 4294967298" \
  -- report "$tmp/schema.json" -o "$tmp/x.html"
doctor "$tmp/host-slash.json" 'd["probes"]["host"] = {"status": "ok", "curves": {"../x/y": {}}}'
check "report: a host curve key with '/', exit 2" 2 'probes.host.curves: key "../x/y" is not a name' \
  -- report "$tmp/host-slash.json" -o "$tmp/x.html" --csv-dir "$tmp/csv"
check "run --path global,global: exit 2" 2 "path 'global' is given twice" -- run latency --path global,global
check "run --max-footprint 1e19: exit 2" 2 "not a size up to 1 PiB" -- run latency --max-footprint 1e19
check "run --option latency.tlb=maybe: exit 2" 2 "latency.tlb: 'maybe'" -- run latency --option latency.tlb=maybe
check "fleet --option with a mistyped key: exit 2, not 3" 2 "unknown compute option 'opz'" \
  -- fleet --ranks 1 --option compute.opz=fp32.fma
check "fleet --option latency.tlb=maybe (a probe the profile leaves out): exit 2" 2 "latency.tlb: 'maybe'" \
  -- fleet --ranks 1 --option latency.tlb=maybe
check "fleet --option for an unknown probe: exit 2" 2 "unknown probe 'bogus'" -- fleet --ranks 1 --option bogus.x=1
for th in inf nan -1 0; do
  check "fleet --threshold $th: exit 2" 2 "--threshold must be a positive finite number" -- fleet --ranks 1 --threshold "$th"
done
touch "$tmp/file"
check "fleet --work-dir that cannot be created: exit 2" 2 "--work-dir $tmp/file/w: cannot create" \
  -- fleet --ranks 1 --work-dir "$tmp/file/w" -o "$tmp/f.html"

# ---- item 5: the baseline cannot be argued with ----
doctor "$tmp/worse-claims.json" '
for f in d["figures"]:
    if f.get("status", "ok") == "ok" and isinstance(f.get("value"), dict):
        k = 0.5 if f.get("better", "higher") == "higher" else 1.5
        for s in ("median", "q1", "q3", "min", "max"): f["value"][s] *= k
        f["resolution"] = 10
'
check "compare --baseline: 50% worse, claiming a step of 1000%, exit 3" 3 "REGRESSION" \
  -- compare "$tmp/worse-claims.json" --baseline "$tmp/h200.json"
doctor "$tmp/no-figures.json" 'd["figures"] = []'
check "compare --baseline: a run with no figures, exit 3" 3 "missing from the new run" \
  -- compare "$tmp/no-figures.json" --baseline "$tmp/h200.json"
doctor "$tmp/renamed.json" '
for f in d["figures"]: f["id"] = f["id"] + "_renamed"
'
check "compare --baseline: every id renamed, exit 3" 3 "missing from the new run" \
  -- compare "$tmp/renamed.json" --baseline "$tmp/h200.json"
check "compare --baseline --allow-missing: a partial run passes, the missing listed" 0 "missing (only in baseline)" \
  -- compare "$tmp/no-figures.json" --baseline "$tmp/h200.json" --allow-missing
check "compare --allow-missing without --baseline: exit 2" 2 "--allow-missing needs --baseline" \
  -- compare "$H200" "$H200" --allow-missing
check "compare --help: --allow-missing explained" 0 "--allow-missing" "partial runs" -- compare --help

# ---- issue 21, item 6: a gate that does not fire on noise the host measured ----
doctor "$tmp/host-noisy.json" '
for f in d["figures"]:
    i = f["id"]
    host = i.startswith("host.") or (i.startswith("bandwidth.host.") and i.endswith("_pageable"))
    if host and f.get("status", "ok") == "ok" and isinstance(f.get("value"), dict):
        for s in ("median", "q1", "q3", "min", "max"): f["value"][s] *= 0.7
'
check "compare --baseline: only host-side figures 30% worse, not gated, exit 0" 0 \
  "not gated (host): would be regressed" "RESULT: no regression" \
  -- compare "$tmp/host-noisy.json" --baseline "$tmp/h200.json" --tolerance 3%
check "compare --baseline --include-host: the host figures gated, exit 3" 3 "REGRESSION" "host.memory.write" \
  -- compare "$tmp/host-noisy.json" --baseline "$tmp/h200.json" --tolerance 3% --include-host
check "compare --include-host without --baseline: exit 2" 2 "--include-host needs --baseline" \
  -- compare "$H200" "$H200" --include-host
check "compare --help: --include-host and the baseline's spread explained" 0 "--include-host" \
  "IQR over median" -- compare --help

gd_finish
