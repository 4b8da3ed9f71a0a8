#!/usr/bin/env bash
# The report page in a real browser: renders the report of the committed H200 result with
# headless Chromium and fails when the page is broken.
#   tests/browser/test_report_page.sh GPUDISSECT RESULT.json [compare]
# With "compare", the page checked is `gpudissect compare RESULT.json -r "GTX 980 Ti"`'s
# (the comparison page shares the report's style).
# Checks: the page has no script; the DOM holds every <svg> the HTML file has, each drawn
# with a size (or inside a closed <details>); no horizontal overflow at 1024 px; no console
# error; the PDF print has pages and a first page that is not blank. Writes the screenshot,
# the DOM and the PDF to $GD_BROWSER_OUT (default: a temporary folder, kept on failure).
# GD_PAGE=FILE checks that HTML file instead of writing the report (to see the test fail).
# Exit 77 (ctest: skipped) when no Chromium is installed; CI installs it.
set -uo pipefail

gd=${1:?usage: test_report_page.sh GPUDISSECT RESULT.json}
json=${2:?usage: test_report_page.sh GPUDISSECT RESULT.json}

source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
find_chromium
for t in pdfinfo pdftoppm pdftotext python3; do
  if ! command -v $t >/dev/null 2>&1; then
    echo "SKIPPED: $t not found (poppler-utils, python3; scripts/install-deps.sh installs them)"
    exit 77
  fi
done

out=${GD_BROWSER_OUT:-$(mktemp -d /tmp/gd-browser.XXXXXX)}
mkdir -p "$out"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

page="$out/report.html"
if [[ -n ${GD_PAGE:-} ]]; then
  cp "$GD_PAGE" "$page"
elif [[ ${3:-} == compare ]]; then
  "$gd" compare "$json" -r "GTX 980 Ti" -o "$page" >"$out/report.log" 2>&1 || {
    cat "$out/report.log"; echo "FAIL: gpudissect compare failed"; exit 1; }
else
  "$gd" report "$json" -o "$page" >"$out/report.log" 2>&1 || {
    cat "$out/report.log"; echo "FAIL: gpudissect report failed"; exit 1; }
fi

# The page itself has no script.
if grep -qi '<script' "$page"; then fail "the page has a <script> element"; fi
promised=$(grep -o '<svg[ >]' "$page" | wc -l)
echo "the HTML has $promised <svg> elements"
(( promised >= 1 )) || fail "no <svg> in the page (the hierarchy diagram is always drawn)"
# A chart gnuplot could not draw is a note in the page, not a chart.
if grep -q 'could not be drawn' "$page"; then fail "the page says a chart could not be drawn"; fi
if [[ -z ${GD_PAGE:-} && -z ${3:-} ]] && command -v "${GD_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
  (( promised >= 5 )) || fail "gnuplot is here but the page has only $promised <svg> elements"
fi

# A copy with a measuring script appended: what the DOM holds once laid out at 1024 px.
probe_copy() {  # probe_copy DEST [print]: with "print", the print rules apply on screen
python3 - "$page" "$1" "${2:-}" <<'PY'
import sys
src, dst, mode = sys.argv[1], sys.argv[2], sys.argv[3]
html = open(src, encoding="utf-8").read()
if mode == "print":
    html = html.replace("@media print", "@media all")
probe = """<script>
(function () {
  var de = document.documentElement, vw = de.clientWidth, wide = [];
  document.querySelectorAll('body *').forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > vw + 1 && wide.length < 8)
      wide.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
                (e.className && e.className.baseVal === undefined ? '.' + e.className : '') +
                ' right=' + Math.round(r.right));
  });
  var svgs = document.querySelectorAll('svg'), shown = 0, hidden = 0;
  svgs.forEach(function (s) {
    if (s.parentElement && s.parentElement.closest('svg')) { shown++; return; }
    var r = s.getBoundingClientRect();
    if (s.closest('details:not([open])')) hidden++;
    else if (r.width > 20 && r.height > 20) shown++;
  });
  var p = document.createElement('pre');
  p.id = 'gd-probe';
  p.textContent = 'GDPROBE scroll=' + de.scrollWidth + ' client=' + vw + ' svg=' + svgs.length +
      ' shown=' + shown + ' hidden=' + hidden + ' wide=' + JSON.stringify(wide) + ' ENDPROBE';
  document.body.appendChild(p);
})();
</script>"""
i = html.rfind("</body>")
open(dst, "w", encoding="utf-8").write(html[:i] + probe + html[i:] if i >= 0 else html + probe)
PY
}
probe_copy "$out/probe.html"
probe_copy "$out/probe-print.html" print

flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --no-default-browser-check
       --disable-extensions --hide-scrollbars --user-data-dir="$out/profile"
       --enable-logging=stderr --v=0)
run() { timeout 60 "$browser" "${flags[@]}" "$@"; }

# layout NAME WIDTH FILE: lays FILE out WIDTH px wide and checks what the DOM holds.
layout() {
  run --window-size="$2",900 --dump-dom "file://$3" >"$out/dom-$1.html" 2>"$out/dom-$1.log"
  local line
  line=$(grep -o 'GDPROBE.*ENDPROBE' "$out/dom-$1.html" | head -1)
  if [[ -z $line ]]; then
    fail "$1: the measuring script did not run (no GDPROBE line in the dumped DOM)"
    return
  fi
  echo "$1 layout at $2 px: $line"
  val() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$line"; }
  local scroll client svg shown hidden
  scroll=$(val scroll); client=$(val client); svg=$(val svg); shown=$(val shown); hidden=$(val hidden)
  (( svg == promised )) || fail "$1: the DOM has $svg <svg> elements, the HTML $promised"
  (( shown + hidden == svg )) || fail "$1: $((svg - shown - hidden)) of $svg charts are drawn with no size"
  (( scroll <= client )) || fail "$1: horizontal overflow: the page is $scroll px wide in a $client px window ($(sed -n 's/.* wide=\(.*\) ENDPROBE/\1/p' <<<"$line"))"
}
layout screen 1024 "$out/probe.html"
# The print rules at the width of an A4 page less its margins (186 mm = 703 px).
layout print 703 "$out/probe-print.html"

run --window-size=1024,1400 --screenshot="$out/screenshot.png" "file://$page" >/dev/null 2>"$out/shot.log"
[[ -s $out/screenshot.png ]] || fail "no screenshot written"
run --no-pdf-header-footer --print-to-pdf="$out/report.pdf" "file://$page" >/dev/null 2>"$out/pdf.log"

# Console errors from the page (it has no script; the measuring copy's would show here).
if grep -hiE 'CONSOLE.*(error|uncaught)|Uncaught ' "$out"/dom-*.log "$out/shot.log" "$out/pdf.log"; then
  fail "console errors (above)"
fi

if [[ ! -s $out/report.pdf ]]; then
  fail "no PDF written"
else
  pages=$(pdfinfo "$out/report.pdf" 2>/dev/null | sed -n 's/^Pages: *//p')
  echo "PDF: ${pages:-?} pages"
  (( ${pages:-0} >= 2 )) || fail "the PDF has ${pages:-no} pages"
  pdftoppm -f 1 -l 1 -r 30 -gray "$out/report.pdf" "$out/page1" 2>/dev/null
  ink=$(python3 - "$out" <<'PY'
import glob, sys
f = sorted(glob.glob(sys.argv[1] + "/page1*.pgm"))
if not f: print(0); sys.exit()
data = open(f[0], "rb").read()
# binary PGM: P5, width height, maxval, then one byte a pixel
parts = data.split(maxsplit=4)
w, h = int(parts[1]), int(parts[2])
px = parts[4][-w * h:]
print(round(1000 * sum(1 for b in px if b < 160) / len(px)))
PY
)
  echo "PDF page 1: ${ink} per mille dark pixels"
  (( ink >= 10 )) || fail "the first PDF page is blank (${ink} per mille dark pixels)"
  # The summary fits the first page: the second begins with the contents.
  if grep -q 'id="glance"' "$page"; then
    page2=$(pdftotext -f 2 -l 2 "$out/report.pdf" - 2>/dev/null | grep -m1 -v '^[[:space:]]*$')
    [[ $page2 == Contents* ]] ||
      fail "the summary does not fit the first printed page (page 2 begins: '${page2:0:60}')"
  fi
fi

if (( fails )); then
  echo "$fails check(s) failed; the screenshot, DOM, PDF and logs are in $out"
  exit 1
fi
if [[ -n ${GD_BROWSER_OUT:-} ]]; then
  echo "report page OK ($promised charts; screenshot $out/screenshot.png)"
else
  echo "report page OK ($promised charts)"
  rm -rf "$out"
fi
exit 0
