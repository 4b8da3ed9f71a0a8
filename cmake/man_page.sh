#!/usr/bin/env bash
# Writes OUT.gz, gpudissect's man page: help2man's page from `gpudissect --help` and
# `--version`, with every subcommand's --help as a part of a COMMANDS section (help2man reads
# only the top level's). Run at build time by cmake/install.cmake.
# Usage: man_page.sh HELP2MAN EXE OUT
set -euo pipefail
HELP2MAN=$1
OUT=$3
# Run by name from the PATH: the usage lines show argv[0], "gpudissect", not the build path.
PATH="$(cd "$(dirname "$2")" && pwd):$PATH"
EXE=$(basename "$2")
inc=$OUT.h2m
# The subcommands: the first word of each line of CLI11's subcommand list.
subs=$("$EXE" --help | awk 'tolower($0) ~ /^subcommands:/ {on = 1; next}
                            on && !NF {on = 0}
                            on {print $1}')
[[ -n $subs ]] || { echo "man_page.sh: no subcommands in $EXE --help" >&2; exit 1; }
{
  echo "[COMMANDS]"
  for s in $subs; do
    echo ".SS \"gpudissect $s\""
    echo ".nf"
    # Text, not roff: a backslash prints as one, and a line may not start a request (. ')
    # or, for help2man, a section ([) or a placement (/).
    "$EXE" "$s" --help | sed -e 's/\\/\\e/g' -e "s|^\([.'[/]\)|\\\\\&\1|"
    echo ".fi"
  done
} >"$inc"
"$HELP2MAN" --no-info --no-discard-stderr --name "GPU microbenchmarks and fleet health checks" \
  --include "$inc" --output "$OUT" "$EXE"
gzip -n -9 -f "$OUT"
