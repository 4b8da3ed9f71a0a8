#!/usr/bin/env bash
# Output targets: a path that exists and is not a regular file is refused (exit 2, the
# message names it, the thing is left as it was), and a write that fails part way (a full
# disk, here a file size limit) leaves neither a partial file nor a temporary one, and the
# old file as it was.
#   tests/cli/test_outputs.sh GPUDISSECT RESULT.json
set -uo pipefail

gd=${1:?usage: test_outputs.sh GPUDISSECT RESULT.json}
json=${2:?usage: test_outputs.sh GPUDISSECT RESULT.json}
t=$(mktemp -d /tmp/gd-outputs.XXXXXX)
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export GD_GNUPLOT=/nonexistent/gnuplot  # no charts: the HTML is the only big output

# refused WHAT ARGS...: the command exits 2 and names WHAT
refused() {
  local what=$1
  shift
  timeout 60 "$gd" "$@" >"$t/out.log" 2>&1  # (a FIFO with no reader would block a write)
  local rc=$?
  if ((rc != 2)); then
    fail "$* exited $rc, expected 2 ($(head -c 300 "$t/out.log"))"
  elif ! grep -qF -- "$what" "$t/out.log"; then
    fail "$*: the message does not name $what: $(head -c 300 "$t/out.log")"
  else
    echo "ok: $* refused: $(grep -m1 error "$t/out.log")"
  fi
}

mkfifo "$t/fifo"
mkdir "$t/folder"
refused "$t/fifo" report "$json" -o "$t/fifo"
refused "$t/folder" report "$json" -o "$t/r.html" --json "$t/folder"
refused "$t/fifo" report "$json" -o "$t/r.html" --json "$t/fifo"
refused "$t/fifo" compare "$json" "$json" -o "$t/fifo"
[[ -p $t/fifo ]] || fail "the FIFO is no longer a FIFO"
[[ -d $t/folder ]] || fail "the folder is no longer a folder"
mkdir -p "$t/csv"
mkfifo "$t/csv/figures.csv"
refused "$t/csv/figures.csv" report "$json" -o "$t/r2.html" --csv-dir "$t/csv"
[[ -p $t/csv/figures.csv ]] || fail "csv/figures.csv is no longer a FIFO"
# A device node of our own (root only: mknod): /dev/null itself is never put at risk.
if mknod "$t/null" c 1 3 2>/dev/null; then
  refused "$t/null" report "$json" -o "$t/r3.html" --json "$t/null"
  [[ -c $t/null ]] || fail "the device node $t/null was replaced"
else
  echo "note: no mknod here (not root): the device-node case is left to the unit test"
fi

# A full disk: writes fail past 16 KiB (SIGXFSZ ignored, so that write() returns EFBIG).
mkdir "$t/full"
echo old >"$t/full/r.html"
(
  ulimit -f 16
  trap '' XFSZ
  exec "$gd" report "$json" -o "$t/full/r.html" --json "$t/full/r.json"
) >"$t/full.log" 2>&1
rc=$?
((rc != 0)) || fail "a write past the size limit exited 0"
grep -q "cannot write $t/full/r.html" "$t/full.log" ||
  fail "no message naming r.html: $(head -c 300 "$t/full.log")"
[[ $(cat "$t/full/r.html") == old ]] || fail "the old r.html was changed"
left=$(ls -A "$t/full" | grep -v '^r.html$')
[[ -z $left ]] || fail "left behind in the folder: $left"
((fails == 0)) && echo "ok: a failed write left the old file and nothing else (exit $rc)"

if ((fails > 0)); then
  echo "$fails check(s) failed; the files are in $t"
  exit 1
fi
rm -rf "$t"
echo PASS
