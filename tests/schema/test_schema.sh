#!/usr/bin/env bash
# The published JSON Schemas (docs/schema) hold for what gpudissect writes: every committed
# result under results/ and fixture under tests/fixtures, a run JSON and a fleet JSON written
# here on the OpenCL device (PoCL in CI), and they are not vacuous: broken copies fail.
# Usage: test_schema.sh GPUDISSECT SOURCE_DIR
# Exit 77 (skip) without python3-jsonschema (exit 1 with GD_REQUIRE_SCHEMA=1); the written outputs are skipped (with the
# committed files still checked) where no OpenCL device opens.
set -uo pipefail
BIN=$1
SRC=$2
# shellcheck source=../find_python.sh
source "$SRC/tests/find_python.sh"
if ! PY=$(find_python jsonschema); then
  # CI installs it (GD_REQUIRE_SCHEMA=1 there): a missing package must not pass as a skip.
  [[ ${GD_REQUIRE_SCHEMA:-0} == 1 ]] && { echo "FAIL: python3-jsonschema not installed"; exit 1; }
  echo "skip: python3-jsonschema not installed"
  exit 77
fi
VALIDATE=("$PY" "$SRC/tests/schema/validate.py" "$SRC/docs/schema")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0


# 1. Everything committed.
mapfile -t committed < <(cd "$SRC" && find results tests/fixtures -type f \( -name '*.json' -o -name '*.json.gz' \) | sort)
n_fleet=$(cd "$SRC" && for f in "${committed[@]}"; do zgrep -l fleet_schema_version "$f"; done | wc -l)
echo "committed: ${#committed[@]} files (${n_fleet} fleet)"
if ((${#committed[@]} < 20 || n_fleet < 1)); then
  echo "FAIL: expected the committed results (20+ files, a fleet JSON among them)"
  fail=1
fi
(cd "$SRC" && "${VALIDATE[@]}" "${committed[@]}") || { echo "FAIL: a committed file does not validate"; fail=1; }

# 2. Not vacuous: each broken copy must be refused, naming where.
"$PY" - "$SRC" "$T" <<'PY'
import gzip, json, sys
src, t = sys.argv[1], sys.argv[2]
run = json.load(open(f"{src}/results/nvidia-h200/nvidia-h200.json"))
fleet = json.load(gzip.open(f"{src}/results/nvidia-h200-x2/fleet.json.gz", "rt"))
def write(name, doc):
    json.dump(doc, open(f"{t}/{name}.json", "w"))
def broken(doc, change):
    d = json.loads(json.dumps(doc)); change(d); return d
write("no-device-name", broken(run, lambda d: d["device"].pop("name")))
write("no-probes", broken(run, lambda d: d.pop("probes")))
write("v2-no-figures", broken(run, lambda d: d.pop("figures")))
write("bad-status", broken(run, lambda d: d["figures"][0].update(status="fine")))
write("bad-median", broken(run, lambda d: d["figures"][0].update(value={"q1": 1.0})))
write("bad-provenance", broken(run, lambda d: d.update(provenance={"command_line": "gpudissect run"})))
write("fleet-bad-rank-result", broken(fleet, lambda d: d["ranks"][1]["result"]["device"].pop("backend")))
write("fleet-no-verdicts", broken(fleet, lambda d: d.pop("verdicts")))
# Valid: unknown keys anywhere, and a provenance object as the run writer adds it.
write("ok-extra-keys", broken(run, lambda d: (d.update(future={"x": 1}),
                                              d["device"].update(future_field=3),
                                              d["figures"][0].update(future_field="y"))))
write("ok-provenance", broken(run, lambda d: d.update(schema_version=3, provenance={
    "host": "node1", "os": "Debian GNU/Linux 12 (bookworm)", "kernel": "Linux 6.1.0",
    "cpu_model": "Intel Xeon", "driver_version": "unknown", "runtime_version": "12.4",
    "tool_version": "0.1.0", "git_revision": "0123abc", "build_type": "Release",
    "command_line": ["gpudissect", "run", "--quick"]})))
PY
for f in "$T"/*.json; do
  name=$(basename "$f" .json)
  out=$("${VALIDATE[@]}" "$f" 2>&1)
  rc=$?
  if [[ $name == ok-* ]]; then
    if [[ $rc -eq 0 ]]; then echo "ok: $name validates"; else echo "FAIL: $name refused: $out"; fail=1; fi
  elif [[ $rc -eq 1 && $out == *INVALID* ]]; then
    echo "ok: $name refused: $(head -1 <<<"$out" | sed 's/^INVALID [^ ]* //')"
  else
    echo "FAIL: $name not refused (exit $rc): $out"
    fail=1
  fi
done

# 3. What this build writes: a tiny run and a two-rank local fleet (one rank failing) on the
# OpenCL device, as in tests/cli/test_fleet.sh.
TINY=(-d opencl:0.0 --option compute.quick=1 --option compute.ops=fp32.fma --option compute.mixed=0
      --option compute.tensor=0 --option compute.ms=1 --option compute.repeats=1 -q)
if "$BIN" run compute "${TINY[@]}" --no-html --out-dir "$T/run" -o "$T/run/run.json" >"$T/run.log" 2>&1; then
  "$BIN" fleet --local --ranks 2 --probes compute "${TINY[@]}" --min-deviation 30% --no-links \
    --rank-timeout 120 --inject fail:1 --work-dir "$T/work" -o "$T/fleet/fleet.html" >"$T/fleet.log" 2>&1
  rc=$?
  [[ $rc -eq 3 ]] || { cat "$T/fleet.log"; echo "FAIL: the fleet with a failing rank exited $rc, want 3"; fail=1; }
  written=("$T/run/run.json" "$T/fleet/fleet.json")
  for f in "${written[@]}"; do [[ -s $f ]] || { echo "FAIL: $f not written"; fail=1; }; done
  "${VALIDATE[@]}" "${written[@]}" || { echo "FAIL: a written file does not validate"; fail=1; }
else
  cat "$T/run.log"
  if grep -qi "no opencl\|no device\|not found\|unknown device" "$T/run.log"; then
    echo "skip: no OpenCL device: the written outputs are not checked"
    ((fail)) && exit 1
    exit 77
  fi
  echo "FAIL: gpudissect run failed"
  fail=1
fi

((fail)) && { echo "test_schema: FAILED"; exit 1; }
echo "test_schema: all passed"
