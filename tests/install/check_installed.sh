#!/usr/bin/env bash
# What an installed gpudissect must do from any folder: print its version, find its reference
# database in <prefix>/share/gpudissect/reference (not the source tree it was built from),
# compare a committed result against a reference GPU, and have its man page.
# Usage: check_installed.sh PREFIX SOURCE_DIR   (PREFIX/bin/gpudissect is run; tests/install/
# test_deb.sh passes /usr, test_install_tree.sh a scratch prefix). GD_EXPECT_MAN=0: a build
# configured without help2man, so no man page is looked for.
set -uo pipefail
PREFIX=$1
SRC=$(realpath "$2")
EXE=$PREFIX/bin/gpudissect
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"  # another folder: nothing of the source or build tree around
unset GD_REFERENCE_DIR
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

version=$(sed -n 's/^project(gpudissect VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
out=$("$EXE" --version 2>&1) && [[ $out == *"$version"* ]] && ok "--version: $(head -1 <<<"$out")" \
  || bad "--version (want $version): $out"

want=$(realpath -m "$PREFIX/share/gpudissect/reference")
n_src=$(ls "$SRC"/data/reference/*.json | wc -l)
out=$("$EXE" reference list 2>&1)
rc=$?
if [[ $rc -eq 0 && $out == *"Reference GPUs ($want)"* ]]; then
  ok "reference list reads $want"
else
  bad "reference list (exit $rc) does not read $want: $(head -3 <<<"$out")"
fi
n_inst=$(ls "$want"/*.json 2>/dev/null | wc -l)
[[ $n_inst -eq $n_src && $n_inst -gt 0 ]] && ok "$n_inst reference files installed" \
  || bad "$n_inst reference files installed, the source has $n_src"
grep -q "NVIDIA H200 (peer tools)" <<<"$out" && ok "reference list names the H200" \
  || bad "reference list lacks the H200: $out"

cp "$SRC/tests/fixtures/h200_run.json" run.json
out=$("$EXE" compare run.json --reference "NVIDIA H200 (peer tools)" -o compare.html 2>&1)
rc=$?
if [[ $rc -eq 0 && -s compare.html ]] && grep -q "peer tools" compare.html; then
  ok "compare --reference wrote compare.html"
else
  bad "compare --reference (exit $rc): $(tail -3 <<<"$out")"
fi
out=$("$EXE" compare run.json --reference "No Such GPU" 2>&1)
rc=$?
[[ $rc -eq 2 && $out == *"peer tools"* ]] && ok "an unknown reference: exit 2, the valid names listed" \
  || bad "an unknown reference: exit $rc: $out"

man=$PREFIX/share/man/man1/gpudissect.1.gz
if [[ ${GD_EXPECT_MAN:-1} == 0 ]]; then
  echo "skip: the man page (help2man was not found when the build was configured)"
elif [[ -s $man ]] && zcat "$man" | grep -q '^\.TH GPUDISSECT' && zcat "$man" | grep -q 'compare'; then
  ok "man page $man"
else
  bad "no man page at $man (help2man: scripts/install-deps.sh)"
fi
for s in run fleet; do
  [[ -s $PREFIX/share/gpudissect/schema/$s.schema.json ]] && ok "$s.schema.json installed" \
    || bad "$s.schema.json not installed"
done
exit $fail
