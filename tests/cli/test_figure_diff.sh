#!/usr/bin/env bash
# scripts/figure_diff.py on two fixture results: its output line by line, --fail-on-diff, .gz
# input, and exit 2 naming the file for a missing, truncated or non-gpudissect input.
#   tests/cli/test_figure_diff.sh SOURCE_DIR
set -uo pipefail

src=${1:?usage: test_figure_diff.sh SOURCE_DIR}
script=$src/scripts/figure_diff.py
fx=$src/tests/fixtures/figure_diff
t=$(mktemp -d /tmp/gd-figure-diff.XXXXXX)
trap 'rm -rf "$t"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# same NAME EXPECTED ACTUAL: the two files are identical, else the diff is printed
same() {
  if diff -u "$2" "$3" >"$t/d.txt"; then
    echo "ok: $1"
  else
    fail "$1:"
    cat "$t/d.txt"
  fi
}

cp "$fx/old.json" "$fx/new.json" "$t/"
gzip -k "$t/new.json"

cat >"$t/expected.txt" <<'EOF'
figures: old.json -> new.json.gz
added (2):
  + bandwidth.read_best ok
  + bandwidth.read_best_footprint error (no plateau found)
removed (1):
  - bandwidth.read_best_footprint_no_l1_plateau_found ok
status changed (3):
  ~ compute.mma.f16: unsupported -> ok
  ~ frontend.launch.latency: unstable -> ok
  ~ memory.carveout.0.l1_capacity: ok -> unsupported (the driver did not apply the split)
counts: old 6, new 7, added 2, removed 1, changed 3, same 2
EOF
(cd "$t" && python3 "$script" old.json new.json.gz >actual.txt 2>&1)
rc=$?
((rc == 0)) || fail "old -> new exited $rc, expected 0"
same "old -> new (.gz), every line" "$t/expected.txt" "$t/actual.txt"

(cd "$t" && python3 "$script" --fail-on-diff old.json new.json >/dev/null 2>&1)
rc=$?
((rc == 1)) && echo "ok: --fail-on-diff exits 1 on a difference" ||
  fail "--fail-on-diff with a difference exited $rc, expected 1"

cat >"$t/expected_self.txt" <<'EOF'
figures: old.json -> old.json
added (0):
removed (0):
status changed (0):
counts: old 6, new 6, added 0, removed 0, changed 0, same 6
EOF
(cd "$t" && python3 "$script" --fail-on-diff old.json old.json >actual_self.txt 2>&1)
rc=$?
((rc == 0)) || fail "a result against itself with --fail-on-diff exited $rc, expected 0"
same "a result against itself: empty diff" "$t/expected_self.txt" "$t/actual_self.txt"

# refused FILE: figure_diff.py exits 2 and its message names FILE
refused() {
  (cd "$t" && python3 "$script" old.json "$1" >out.txt 2>&1)
  local rc=$?
  if ((rc != 2)); then
    fail "$1 exited $rc, expected 2: $(head -c 300 "$t/out.txt")"
  elif ! grep -qF -- "$1" "$t/out.txt"; then
    fail "$1: the message does not name it: $(head -c 300 "$t/out.txt")"
  elif grep -q Traceback "$t/out.txt"; then
    fail "$1: a traceback instead of a message"
  else
    echo "ok: $1 refused: $(head -1 "$t/out.txt")"
  fi
}
refused missing.json
head -c 40 "$t/new.json.gz" >"$t/truncated.json.gz"
refused truncated.json.gz
echo '{"figures": []}' >"$t/no_tool.json"
refused no_tool.json
echo '{"tool": {"name": "gpudissect"}, "probes": {}}' >"$t/no_figures.json"
refused no_figures.json
echo '{"tool": {"name": "gpudissect"}, "figures": [{"id": "x"}]}' >"$t/no_status.json"
refused no_status.json
echo '[1, 2]' >"$t/array.json"
refused array.json
printf '\xff\xfe' >"$t/binary.json"
refused binary.json
python3 -c 'print("[" * 100000 + "]" * 100000)' >"$t/deep.json"
refused deep.json

((fails == 0)) && echo "figure_diff: all passed" || echo "figure_diff: $fails failed"
((fails == 0))
