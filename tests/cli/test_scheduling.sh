#!/usr/bin/env bash
# The scheduler recipes of docs/scheduling.md, run as written on the PoCL device: every
# gpudissect command line of the code blocks that follow a `<!-- tested -->` line.
# Usage: test_scheduling.sh GPUDISSECT DOC
#
# A command line is a line of such a block whose text, after its indentation and a YAML list's
# "- ", starts with "gpudissect " (a trailing "\" joins the next line, a trailing " &" is
# dropped). Each runs under `bash -u -c` from a scratch folder, with:
#   - `gpudissect` on the PATH: the binary under test, with `cuda:N` device ids turned into
#     opencl:0.0 and, for `run`, short sweeps (a bandwidth budget of 3 s, 2 atomics repeats,
#     host memory up to 32M) added: every probe still runs and writes its JSON, in a fifth of
#     the CPU time of the recipes' --quick (the line's text is not changed);
#   - the variables the recipes use: BASELINE (written by the first line), NODE, RESULTS, i,
#     TMPDIR (all inside a scratch folder);
#     a line that uses NODE_NAME runs once per node of two (node-a, node-b), as two pods would.
# Exit status 0, 3 (a regression or outlier: PoCL's figures move run to run) and 4 pass;
# anything else fails. A line with an option that `gpudissect SUBCOMMAND --help` does not
# name is skipped, and so is every line after it (they may read what it would have written):
# exit 77 then (ctest SKIP_RETURN_CODE), unless a line failed. The JSONs written are checked
# against docs/schema.
set -uo pipefail
BIN=$(realpath "$1")
DOC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

mkdir -p "$T/bin" "$T/results" "$T/work"
cat >"$T/bin/gpudissect" <<EOF
#!/usr/bin/env bash
args=()
for a in "\$@"; do
  [[ \$a =~ ^cuda:[0-9]+\$ ]] && a=opencl:0.0
  args+=("\$a")
done
[[ \${1:-} == run ]] && args+=(--option bandwidth.budget=3 --option atomics.repeats=2
  --option host.max_footprint=32M)
exec "$BIN" "\${args[@]}"
EOF
chmod +x "$T/bin/gpudissect"

# The command lines, one per NUL-terminated record.
python3 - "$DOC" >"$T/lines" <<'PY'
import re, sys
lines, out, tested, block, pending = open(sys.argv[1]).read().splitlines(), [], False, None, ""
for text in lines:
    if block is None:
        if text.strip() == "<!-- tested -->":
            tested = True
        elif text.startswith("```"):
            block = tested
            tested = False
        elif text.strip():
            tested = False
        continue
    if text.startswith("```"):
        block = None
        continue
    if not block:
        continue
    s = pending + text.strip() if pending else re.sub(r"^\s*(- )?", "", text).rstrip()
    if s.endswith("\\"):
        pending = s[:-1].rstrip() + " "
        continue
    pending = ""
    if s.startswith("gpudissect "):
        out.append(re.sub(r"\s+&$", "", s))
sys.stdout.write("".join(l + "\0" for l in out))
PY
mapfile -d '' -t cmds <"$T/lines"
echo "docs: ${#cmds[@]} command lines in tested blocks of $DOC"
if ((${#cmds[@]} < 4)); then
  echo "FAIL: expected the baseline, Slurm, DaemonSet and Job command lines"
  exit 1
fi

# Whether every option of a command line is one `gpudissect SUB --help` names.
unknown_option() {  # unknown_option LINE: prints the first unknown option
  python3 - "$BIN" "$1" <<'PY'
import re, shlex, subprocess, sys
words = shlex.split(sys.argv[2])[1:]
sub = next((w for w in words if not w.startswith("-")), "")
helptext = subprocess.run([sys.argv[1], sub, "--help"], capture_output=True, text=True).stdout
known = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", helptext))
for w in words:
    opt = w.split("=", 1)[0]
    if re.fullmatch(r"--?[A-Za-z][\w-]*", opt) and opt not in known:
        print(opt)
        break
PY
}

mkdir -p "$T/tmp"
export PATH="$T/bin:$PATH" BASELINE="$T/baseline.json" NODE=node-a RESULTS="$T/results" i=0 \
  TMPDIR="$T/tmp"
fail=0 ran=0 skipped=0
for c in "${cmds[@]}"; do
  if ((skipped)); then
    echo "skip (after a skipped line): $c"
    skipped=$((skipped + 1))
    continue
  fi
  opt=$(unknown_option "$c")
  if [[ -n $opt ]]; then
    echo "skip: $opt is not an option of this gpudissect yet: $c"
    skipped=1
    continue
  fi
  nodes=(node-a)
  [[ $c == *NODE_NAME* ]] && nodes=(node-a node-b)
  for n in "${nodes[@]}"; do
    echo "+ $c   (NODE_NAME=$n)"
    (cd "$T/work" && NODE_NAME=$n bash -u -c "$c") >"$T/out" 2>&1
    rc=$?
    tail -5 "$T/out"
    if [[ $rc -eq 0 || $rc -eq 3 || $rc -eq 4 ]]; then
      echo "ok: exit $rc"
      ran=$((ran + 1))
    else
      echo "FAIL: exit $rc: $c"
      fail=1
    fi
  done
done
# What the recipes wrote follows the published schemas (docs/schema).
SCHEMA=$(dirname "$DOC")/schema
mapfile -t written < <(find "$T/results" "$BASELINE" -name '*.json' 2>/dev/null | sort)
# shellcheck source=../find_python.sh
source "$(dirname "${BASH_SOURCE[0]}")/../find_python.sh"
if ((${#written[@]})) && SCHEMA_PY=$(find_python jsonschema); then
  "$SCHEMA_PY" "$SCHEMA/../../tests/schema/validate.py" "$SCHEMA" "${written[@]}" ||
    { echo "FAIL: a JSON the recipes wrote does not follow docs/schema"; fail=1; }
fi
echo "test_scheduling: $ran runs, $skipped line(s) skipped"
((fail)) && exit 1
((skipped)) && exit 77
exit 0
