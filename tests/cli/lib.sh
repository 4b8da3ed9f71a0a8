# shellcheck shell=bash
# The harness the shell tests share; sourced, not run. The TAP-like checks print "ok - NAME",
# "not ok - NAME" (with the last command, its exit code and output) or "ok - NAME # SKIP WHY";
# gd_finish prints "N passed, M failed" and returns non-zero when a check failed.
# A script sets T (seconds any one gpudissect command may take) before calling gd or check.

# gd_setup USAGE_NAME PREFIX GPUDISSECT: GD becomes the binary's absolute path, tmp a scratch
# folder (removed on exit, with the background process bg_pid if one is set) and the working
# folder, so that anything written to a default folder lands there.
gd_setup() {
  GD=${3:?usage: $1 path/to/gpudissect}
  [[ $GD == */* ]] && GD=$(cd "$(dirname "$GD")" && pwd)/$(basename "$GD")
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/$2.XXXXXX")
  bg_pid=""
  trap gd_cleanup EXIT
  cd "$tmp" || exit 1
}
gd_cleanup() {
  [[ -n $bg_pid ]] && kill -KILL "$bg_pid" 2>/dev/null
  rm -rf "$tmp"
}

passed=0 failed=0 skipped=0 rc=0 last_cmd=""
ok() { echo "ok - $1"; passed=$((passed + 1)); }
# not_ok NAME [DETAIL...]: details are printed indented, then the last command's output.
not_ok() {
  echo "not ok - $1"
  shift
  local l
  for l in "$@"; do echo "#   $l"; done
  if [[ -n $last_cmd ]]; then
    echo "#   command: $last_cmd"
    echo "#   exit code: $rc"
    sed -n '1,20s/^/#   stdout: /p' "$tmp/out" 2>/dev/null
    sed -n '1,20s/^/#   stderr: /p' "$tmp/err" 2>/dev/null
  fi
  failed=$((failed + 1))
}
skip() { echo "ok - $1 # SKIP $2"; skipped=$((skipped + 1)); }
gd_finish() {
  ((skipped)) && echo "# $skipped skipped"
  echo "$passed passed, $failed failed"
  ((failed == 0))
}

# gd ARGS...: runs gpudissect (stdin closed, time-limited); sets rc, stdout in $tmp/out,
# stderr in $tmp/err.
gd() {
  last_cmd="gpudissect $*"
  timeout "$T" "$GD" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  [[ $rc == 124 ]] && echo "# (timed out after $T s: gpudissect $*)"
  return 0
}
# has PATTERN: the last command's stdout or stderr contains PATTERN (fixed string).
has() { grep -qF -- "$1" "$tmp/out" "$tmp/err"; }
out_has() { grep -qF -- "$1" "$tmp/out"; }
err_has() { grep -qF -- "$1" "$tmp/err"; }

# check NAME WANT_RC PATTERN... -- ARGS...: runs gpudissect ARGS, expects exit code WANT_RC
# and every PATTERN (fixed text) in its stdout or stderr; a PATTERN starting with "!" must be
# absent. A script may define check_also, run after the patterns, to add to `why`.
check() {
  local name=$1 want=$2
  shift 2
  local pats=()
  while [[ $1 != -- ]]; do pats+=("$1"); shift; done
  shift
  gd "$@"
  local why=() p
  [[ $rc == "$want" ]] || why+=("expected exit code $want, got $rc")
  for p in "${pats[@]}"; do
    if [[ $p == !* ]]; then
      has "${p:1}" && why+=("did not expect '${p:1}'")
    else
      has "$p" || why+=("expected '$p'")
    fi
  done
  [[ $(type -t check_also) == function ]] && check_also
  if ((${#why[@]} == 0)); then ok "$name"; else not_ok "$name" "${why[@]}"; fi
}

# stop_bg SIGNAL: sends SIGNAL to the background run bg_pid, gives it T seconds to end (then
# kills it), and sets rc to its exit code; adds to `why` what went wrong on the way.
stop_bg() {
  if kill -0 "$bg_pid" 2>/dev/null; then
    kill "-$1" "$bg_pid"
    for _ in $(seq 1 $((T * 10))); do
      kill -0 "$bg_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$bg_pid" 2>/dev/null; then
      kill -KILL "$bg_pid" 2>/dev/null
      why+=("still running $T s after SIG$1 (killed)")
    fi
  else
    why+=("the run ended before SIG$1 could be sent (too fast, or it failed)")
  fi
  wait "$bg_pid"
  rc=$?
  bg_pid=""
}

# find_chromium: sets `browser` to the first Chromium found ($CHROMIUM first), or exits: 77
# (ctest: skipped), or 1 under GD_REQUIRE_BROWSER=1 (CI: a browser silently missing fails).
find_chromium() {
  browser=""
  local b
  for b in "${CHROMIUM:-}" chromium chromium-browser google-chrome-stable google-chrome; do
    [[ -n $b ]] && command -v "$b" >/dev/null 2>&1 && { browser=$(command -v "$b"); return 0; }
  done
  if [[ ${GD_REQUIRE_BROWSER:-0} == 1 ]]; then
    echo "FAIL: no chromium binary and GD_REQUIRE_BROWSER=1 (scripts/install-deps.sh installs it)"
    exit 1
  fi
  echo "SKIPPED: no chromium binary (apt-get install chromium; scripts/install-deps.sh does)"
  exit 77
}
