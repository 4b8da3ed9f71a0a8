#!/usr/bin/env bash
# The fleet page in a real browser: 8 GPUs collected (fleet --collect) from copies of the
# committed H200 run, laid out by headless Chromium in a 1400 px window.
#   tests/browser/test_fleet_page.sh GPUDISSECT RESULT.json
# Checks: no horizontal overflow of the page at 1400 px (a wide "Every GPU" table scrolls in
# its own box); with the quick profile's figures the table fits its box without scrolling;
# no figure in exponent notation. Exit 77 (ctest: skipped) without Chromium.
set -uo pipefail
gd=${1:?usage: test_fleet_page.sh GPUDISSECT RESULT.json}
json=${2:?usage: test_fleet_page.sh GPUDISSECT RESULT.json}
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
find_chromium
out=$(mktemp -d /tmp/gd-fleet-browser.XXXXXX)
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The run with its figures (report --json writes them), then 8 GPUs of it: every figure, and
# only the quick profile's bandwidth and compute figures (at most 8).
"$gd" report "$json" -o "$out/run.html" --json "$out/run.json" >"$out/report.log" 2>&1 ||
  { cat "$out/report.log"; echo "FAIL: gpudissect report"; exit 1; }
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
run = json.load(open(out + "/run.json"))
quick = [f for f in run["figures"] if f["id"].split(".")[0] in ("bandwidth", "compute")][:8]
for name, figs in (("all", run["figures"]), ("quick", quick)):
    os.makedirs(f"{out}/{name}", exist_ok=True)
    for k in range(8):
        j = dict(run, figures=figs)
        j["device"] = dict(run["device"], extra=dict(run["device"]["extra"],
                           uuid=f"GPU-720306a7-9665-294d-d336-8c0269992d0{k}",
                           pci_bus_id=f"0000:{k:02x}:00.0"))
        j["provenance"] = {"host": f"gpu-node-{k // 4:03d}.cluster.example.org"}
        json.dump(j, open(f"{out}/{name}/gpu{k}.json", "w"))
PY
measure='<script>
(function () {
  var de = document.documentElement, box = document.querySelector("table.every").parentElement;
  var p = document.createElement("pre");
  p.textContent = "GDPROBE scroll=" + de.scrollWidth + " client=" + de.clientWidth +
      " boxscroll=" + box.scrollWidth + " boxclient=" + box.clientWidth + " ENDPROBE";
  document.body.appendChild(p);
})();
</script>'
for name in all quick; do
  "$gd" fleet --collect "$out/$name" -q -o "$out/$name.html" >"$out/$name.log" 2>&1
  rc=$?
  (( rc == 0 || rc == 3 )) || { cat "$out/$name.log"; fail "$name: fleet --collect exit $rc"; continue; }
  if grep -o '<td class="v[^>]*>[^<]*' "$out/$name.html" | grep -qE '[0-9]e[+-][0-9]'; then
    fail "$name: a figure in exponent notation"
  fi
  python3 -c "import sys; h=open(sys.argv[1]).read(); i=h.rfind('</body>'); open(sys.argv[2],'w').write(h[:i]+sys.argv[3]+h[i:])" \
    "$out/$name.html" "$out/$name-probe.html" "$measure"
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --hide-scrollbars --user-data-dir="$out/profile" --window-size=1400,900 \
    --dump-dom "file://$out/$name-probe.html" >"$out/$name-dom.html" 2>"$out/$name-dom.log"
  line=$(grep -o 'GDPROBE.*ENDPROBE' "$out/$name-dom.html" | head -1)
  [[ -n $line ]] || { fail "$name: the measuring script did not run"; continue; }
  echo "$name at 1400 px: $line"
  val() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$line"; }
  (( $(val scroll) <= $(val client) )) || fail "$name: the page overflows the 1400 px window"
  if [[ $name == quick ]]; then
    (( $(val boxscroll) <= $(val boxclient) )) ||
      fail "quick: the Every GPU table does not fit 1400 px ($(val boxscroll) px)"
  fi
done
if (( fails )); then echo "$fails check(s) failed; files in $out"; exit 1; fi
rm -rf "$out"
echo "fleet page OK"
