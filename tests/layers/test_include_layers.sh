#!/usr/bin/env bash
# The include graph keeps the layers apart (issue 24):
#  - a probe's non-report files (entry.cpp, run.*, model.cpp, figures.cpp, its model header,
#    its kernels' host code) include no report header: report/*.hpp, or any probe's
#    report.hpp. Only probes/<name>/report.cpp, report.hpp and the composition root
#    (probes/registry.*) may.
#  - core (core/include, core/src, and the probe files the core library compiles:
#    probes/*/model.cpp, probes/*/figures.cpp, the model headers probes/<name>/<name>.hpp)
#    includes only core headers (gpudissect/...) and the probe model headers
#    (<name>/<name>.hpp).
# Usage: test_include_layers.sh SOURCE_ROOT. Quoted includes only: <...> is the system's.
set -u
root=${1:?usage: $0 SOURCE_ROOT}
cd "$root" || exit 2
fail=0

report_headers=$(cd report && ls *.hpp)
is_report_header() {  # $1: the included path as written
  local inc=$1
  case $inc in
    */report.hpp | report/*) return 0 ;;
  esac
  for h in $report_headers; do [[ $inc == "$h" ]] && return 0; done
  return 1
}
includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"; }

for f in probes/*/*; do
  case $f in
    */report.cpp | */report.hpp) continue ;;
  esac
  [[ -f $f ]] || continue
  while IFS= read -r inc; do
    [[ -n $inc ]] || continue
    if is_report_header "$inc"; then
      echo "FAIL: $f includes the report header \"$inc\""
      fail=1
    fi
  done < <(includes "$f")
done

core_files=$(ls core/include/gpudissect/*.hpp core/src/*.cpp probes/*/model.cpp \
  probes/*/figures.cpp 2>/dev/null)
for d in probes/*/; do
  n=$(basename "$d")
  [[ -f $d$n.hpp ]] && core_files+=" $d$n.hpp"
done
for f in $core_files; do
  while IFS= read -r inc; do
    [[ -n $inc ]] || continue
    case $inc in
      gpudissect/*) [[ -f core/include/$inc ]] && continue ;;
      */*)
        n=${inc%%/*}
        [[ $inc == "$n/$n.hpp" && -f probes/$inc ]] && continue ;;
    esac
    echo "FAIL: core file $f includes \"$inc\" (core may include gpudissect/*.hpp and the" \
         "probe model headers <name>/<name>.hpp only)"
    fail=1
  done < <(includes "$f")
done

[[ $fail == 0 ]] && echo "include layers: ok"
exit $fail
