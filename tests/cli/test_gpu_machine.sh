#!/usr/bin/env bash
# scripts/gpu-machine.sh on a machine without a GPU: --help, --list, a dry run of every step
# and the argument errors, so that the GPU-machine entry point cannot rot between GPU runs.
# Usage: bash tests/cli/test_gpu_machine.sh [path/to/gpu-machine.sh]
set -uo pipefail
S=${1:-$(dirname "${BASH_SOURCE[0]}")/../../scripts/gpu-machine.sh}
S=$(cd "$(dirname "$S")" && pwd)/$(basename "$S")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1${2:+: $2}"; fails=$((fails + 1)); }

bash -n "$S" && ok "parses" || not_ok "parses"

out=$(bash "$S" --help 2>&1)
rc=$?
[[ $rc == 0 && $out == *"Usage:"* && $out == *"--dry-run"* && $out == *"--deps"* ]] &&
  ok "--help: exit 0 with the usage" || not_ok "--help" "exit $rc"

steps=$(bash "$S" --list)
want="build full repeat sweep quick opencl vulkan cpu busy links links-check"
[[ $(echo $steps) == "$want" ]] && ok "--list: $want" || not_ok "--list" "got: $(echo $steps)"
for s in $steps; do
  [[ $out == *"  $s "* ]] || not_ok "--help describes step $s"
done

# Every step, dry: exit 0, a header per step, each gpudissect run and gate printed, nothing
# executed (no build exists here, and nothing is written but the empty output folders).
mkdir -p "$tmp/deps" && touch "$tmp/deps/libcli11-dev_1.0_all.deb" "$tmp/deps/libvulkan1_1.0_amd64.deb"
out=$(BUILD_DIR=no-such-build GD_DEPS_ROOT=$tmp/root bash "$S" --dry-run --out "$tmp/out" \
  --deps "$tmp/deps" --tar "$tmp/out.tar.gz" $steps 2>&1)
rc=$?
[[ $rc == 0 ]] && ok "dry run of every step: exit 0" || not_ok "dry run of every step" "exit $rc: $out"
for s in $steps; do
  grep -q "^== $s " <<<"$out" || not_ok "dry run: step $s announced"
done
n_runs=$(grep -c "^+ timeout [0-9]* ./no-such-build/gpudissect run" <<<"$out")
((n_runs == 20)) && ok "dry run: 20 gpudissect runs" || not_ok "dry run: 20 gpudissect runs" "got $n_runs"
grep -q "^+ dpkg -x $tmp/deps/libcli11-dev_1.0_all.deb $tmp/root" <<<"$out" &&
  grep -q "^+ dpkg -x $tmp/deps/libvulkan1_1.0_amd64.deb /$" <<<"$out" &&
  ok "dry run: the packages unpacked, the Vulkan loader to /" || not_ok "dry run: packages" "$out"
n_gates=$(grep -c "compare --baseline $tmp/out/results/full/" <<<"$out")
((n_gates == 7)) && ok "dry run: quick, busy and repeats gated against the full run" ||
  not_ok "dry run: 7 gates against the full run" "got $n_gates"
grep -q "mpirun .* -n 2 ./no-such-build/gpudissect fleet" <<<"$out" && ok "dry run: 2-rank fleet" ||
  not_ok "dry run: 2-rank fleet"
[[ ! -e $tmp/root && ! -e $tmp/out.tar.gz && ! -e $tmp/out/log.txt ]] && ok "dry run: nothing executed" ||
  not_ok "dry run: nothing executed"
out=$(bash "$S" -n quick --baseline /some/full.json --out "$tmp/o2" 2>&1)
grep -q "compare --baseline /some/full.json" <<<"$out" && ok "--baseline: the gate's baseline" ||
  not_ok "--baseline" "$out"

(cd "$tmp" && bash "$S" -n quick --out rel --baseline b.json >"$tmp/rel.txt" 2>&1)
[[ -d $tmp/rel ]] && grep -q "compare --baseline $tmp/b.json $tmp/rel/results/quick/" "$tmp/rel.txt" &&
  ok "relative paths are the caller's" || not_ok "relative paths are the caller's" "$(cat "$tmp/rel.txt")"

# Errors: exit 2 with a message; a real step without a build fails (exit 1) without running.
bash "$S" --out "$tmp/o3" >/dev/null 2>"$tmp/err"
[[ $? == 2 ]] && grep -q "no step" "$tmp/err" && ok "no step: exit 2" || not_ok "no step: exit 2"
bash "$S" --out "$tmp/o3" fulll >/dev/null 2>"$tmp/err"
[[ $? == 2 ]] && grep -q "unknown step 'fulll'" "$tmp/err" && ok "unknown step: exit 2" || not_ok "unknown step: exit 2"
bash "$S" --bogus full >/dev/null 2>"$tmp/err"
[[ $? == 2 ]] && ok "unknown option: exit 2" || not_ok "unknown option: exit 2"
bash "$S" --deps "$tmp/nope" full >/dev/null 2>"$tmp/err"
[[ $? == 2 ]] && grep -q "not a folder" "$tmp/err" && ok "--deps not a folder: exit 2" || not_ok "--deps not a folder"
out=$(BUILD_DIR=no-such-build bash "$S" --out "$tmp/o4" full 2>&1)
rc=$?
[[ $rc == 1 && $out == *"is not built"* ]] && ok "full without a build: exit 1, says so" ||
  not_ok "full without a build" "exit $rc: $out"

((fails == 0)) && echo "all passed" || echo "$fails failed"
((fails == 0))
