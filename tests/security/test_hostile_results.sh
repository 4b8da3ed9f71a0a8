#!/usr/bin/env bash
# Hostile result files: every committed result under results/ with text that would run a
# command (in gnuplot, in a shell) or a script (in the HTML page) appended to every string
# value and map key (tests/security/hostile.py), turned into reports and comparisons.
#   tests/security/test_hostile_results.sh GPUDISSECT PROJECT_ROOT
# Checks: no marker file appears (nothing ran); every report and comparison is written
# (exit 0: hostile text is still text); no page has a <script> element or an id outside
# [A-Za-z0-9_:.-]; the pages opened in headless Chromium keep their title (no script ran)
# and their DOM has no <script>. Charts (gnuplot) are drawn for a sample that covers every
# probe's section, the other files get their HTML and CSV without charts, to keep the time
# down; GD_HOSTILE_ALL=1 draws charts for all of them.
# Exit 77 (ctest: skipped) without python3, gnuplot or Chromium; CI installs them.
set -uo pipefail

gd=$(realpath "${1:?usage: test_hostile_results.sh GPUDISSECT PROJECT_ROOT}")
root=$(realpath "${2:?usage: test_hostile_results.sh GPUDISSECT PROJECT_ROOT}")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

browser=""
for b in "${CHROMIUM:-}" chromium chromium-browser google-chrome-stable google-chrome; do
  [[ -n $b ]] && command -v "$b" >/dev/null 2>&1 && { browser=$(command -v "$b"); break; }
done
missing=""
[[ -z $browser ]] && missing+=" chromium"
command -v python3 >/dev/null 2>&1 || missing+=" python3"
command -v "${GD_GNUPLOT:-gnuplot}" >/dev/null 2>&1 || missing+=" gnuplot"
if [[ -n $missing ]]; then
  if [[ ${GD_REQUIRE_BROWSER:-0} == 1 ]]; then
    echo "FAIL: missing:$missing (scripts/install-deps.sh installs them)"
    exit 1
  fi
  echo "SKIPPED: missing:$missing (scripts/install-deps.sh installs them)"
  exit 77
fi

work=$(mktemp -d /tmp/gd-hostile.XXXXXX)
# Every command runs in this folder: a command from the files leaves a file here.
mark="$work/mark"
mkdir -p "$mark"
cd "$mark" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Run results (not the fleet summary), as found; *.json only.
mapfile -t inputs < <(cd "$root" && find results -name '*.json' | sort | python3 -c '
import json, sys
for f in sys.stdin.read().split():
    try:
        d = json.load(open(f, encoding="utf-8"))
    except ValueError:
        continue
    if isinstance(d, dict) and "schema_version" in d:
        print(f)')
(( ${#inputs[@]} > 0 )) || { echo "FAIL: no result JSON under $root/results"; exit 1; }
# Charts for these: between them every probe, the CUDA and the OpenCL flavours, two GPUs,
# a compute sweep.
# The small ones also get PNG files and hostile status values.
big=" results/nvidia-h200/nvidia-h200.json "
small=" results/cpu-vm-pocl/pthread-skylake-avx512-intel-r-xeon-r-processor.json results/nvidia-h200-x2/links.json results/nvidia-h200/compute.json "
sample="$big$small"
echo "${#inputs[@]} result files; charts for the sample${GD_HOSTILE_ALL:+ (all: GD_HOSTILE_ALL)}"

pages=()   # every page written
browse=()  # pages of the sample opened in Chromium
n=0
for rel in "${inputs[@]}"; do
  n=$((n + 1))
  charts=0
  [[ $sample == *" $rel "* || -n ${GD_HOSTILE_ALL:-} ]] && charts=1
  modes=(all)  # values and map keys at once: the HTML and CSV without charts
  [[ $charts == 1 ]] && modes=(text keys)
  [[ $small == *" $rel "* || -n ${GD_HOSTILE_ALL:-} ]] && modes+=(status html)
  for mode in "${modes[@]}"; do
    d="$work/$n-$mode"
    mkdir -p "$d"
    python3 "$here/hostile.py" "$root" "$root/$rel" "$d/in.json" $mode ||
      { fail "$rel: hostile.py failed"; continue; }
    gnuplot_env=()
    [[ $charts == 0 ]] && gnuplot_env=(GD_GNUPLOT=/nonexistent/gnuplot)
    args=(report "$d/in.json" -o "$d/report.html" --csv-dir "$d/csv" --json "$d/out.json")
    png=()
    [[ $charts == 1 && $big != *" $rel "* ]] && png=(--png)  # (pngcairo is slow)
    args+=("${png[@]}")
    env "${gnuplot_env[@]}" "$gd" "${args[@]}" >"$d/report.log" 2>&1
    rc=$?
    # Keys that name files (latency paths, TLB strides, host curves) are refused by the
    # reader when they are not plain names, and so are status words it does not know: exit 2
    # with the key's path is the right answer, and nothing may have run (the marker check
    # below).
    if (( rc == 2 )) && [[ $mode != text && $mode != html ]] &&
      grep -qE "malformed gpudissect result: .*(key|not a status)" "$d/report.log"; then
      echo "$rel ($mode): refused by the reader: $(head -c 120 "$d/report.log" | head -1)"
      continue
    fi
    (( rc == 0 )) || fail "$rel ($mode): report exited $rc ($(head -c 300 "$d/report.log"))"
    if [[ -f $d/report.html ]]; then
      pages+=("$d/report.html")
      # Chromium (slow) for the modes whose markup can run: text and html
      [[ $charts == 1 && ($mode == text || $mode == html) ]] && browse+=("$d/report.html")
      if [[ $charts == 1 ]]; then
        svgs=$(grep -o '<svg[ >]' "$d/report.html" | wc -l)
        echo "$rel ($mode): report with $svgs <svg>"
        # (with hostile keys or status values fewer charts remain)
        [[ $mode != text && $mode != html ]] || (( svgs >= 3 )) ||
          fail "$rel ($mode): only $svgs <svg> in the report: gnuplot did not draw"
      fi
    fi
    [[ $charts == 1 ]] || continue
    # A comparison of the hostile file with the original and a reference GPU, and the
    # baseline gate both ways round.
    "$gd" compare "$d/in.json" "$root/$rel" -r "GTX 980 Ti" -o "$d/compare.html" "${png[@]}" \
      --csv "$d/compare.csv" >"$d/compare.log" 2>&1
    rc=$?
    (( rc == 0 )) || fail "$rel ($mode): compare exited $rc ($(head -c 300 "$d/compare.log"))"
    if [[ -f $d/compare.html ]]; then
      pages+=("$d/compare.html")
      [[ $mode == text ]] && browse+=("$d/compare.html")
    fi
    "$gd" compare "$d/in.json" --baseline "$root/$rel" --csv "$d/baseline.csv" -v \
      >"$d/baseline.log" 2>&1
    (( $? <= 3 )) || fail "$rel ($mode): compare --baseline crashed ($(tail -3 "$d/baseline.log"))"
    "$gd" compare "$root/$rel" --baseline "$d/in.json" >"$d/baseline2.log" 2>&1
    (( $? <= 3 )) || fail "$rel ($mode): compare --baseline (hostile baseline) crashed"
    # One GPU through two backends (forced: the copy's name and backend are hostile too) and
    # the parity table: the file's text stays on its line in the terminal and in Markdown.
    "$gd" compare "$d/in.json" "$root/$rel" --cross-backend -v --csv "$d/cross.csv" \
      --json "$d/cross.json" >"$d/cross.log" 2>&1
    (( $? == 0 )) || fail "$rel ($mode): compare --cross-backend failed ($(tail -3 "$d/cross.log"))"
    "$gd" compare --parity "$root/$rel" "$d/in.json" --markdown >"$d/parity.md" 2>&1
    (( $? == 0 )) || fail "$rel ($mode): compare --parity failed ($(tail -3 "$d/parity.md"))"
    if grep -qE '^(EOD|!touch)' "$d/cross.log" "$d/parity.md"; then
      fail "$rel ($mode): a line break from the file reached the terminal or the Markdown"
    fi
  done
done

ran=$(ls -A "$mark")
[[ -z $ran ]] || fail "commands from the files ran: marker files $(echo $ran)"

# The pages as written: no <script>, ids of a strict shape (gnuplot's, the tool's).
for page in "${pages[@]}"; do
  if grep -qi '<script' "$page"; then fail "$page has a <script> element"; fi
  # (an id, its closing quote, then a blank, / or >: a quote from the data would end it early)
  bad=$(python3 - "$page" <<'PY'
import re, sys
html = open(sys.argv[1], encoding="utf-8", errors="replace").read()
ok = re.compile(r"""\sid=(["'])[A-Za-z][A-Za-z0-9_:.-]*\1[\s/>]""")
bad = [html[m.start():m.start() + 80] for m in re.finditer(r"\sid=", html)
       if not ok.match(html, m.start())]
print(" | ".join(repr(b) for b in bad[:3]))
PY
)
  [[ -z $bad ]] || fail "$page has ids of another shape: $bad"
done

# The pages in Chromium, with time for onload/onerror handlers to fire.
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run
       --no-default-browser-check --disable-extensions --user-data-dir="$work/profile"
       --virtual-time-budget=3000 --dump-dom)
for page in "${browse[@]}"; do
  dom="${page%.html}.dom"
  timeout 60 "$browser" "${flags[@]}" "file://$page" >"$dom" 2>"$dom.log"
  [[ -s $dom ]] || { fail "$page: Chromium dumped no DOM ($(tail -2 "$dom.log"))"; continue; }
  before=$fails
  if grep -q 'PWNED' "$dom"; then fail "$page: a script from the file ran in Chromium"; fi
  if grep -qi '<script' "$dom"; then fail "$page: the DOM has a <script> element"; fi
  (( fails > before )) || echo "$page: Chromium: no script ran"
done

ran=$(ls -A "$mark")
[[ -z $ran ]] || fail "commands ran while the pages were open: marker files $(echo $ran)"

if (( fails > 0 )); then
  echo "$fails check(s) failed; the files are in $work"
  exit 1
fi
rm -rf "$work"
echo "PASS: ${#inputs[@]} hostile result files, ${#pages[@]} pages, ${#browse[@]} in Chromium"
