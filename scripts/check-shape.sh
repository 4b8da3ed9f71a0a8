#!/usr/bin/env bash
# Checks the shape of the source: no file over 600 lines and no function over 80 lines
# without a reason written down. Run by CTest as `code_shape`; exits 1 on any finding.
# Usage: scripts/check-shape.sh [repo root]   (default: this script's repository)
#
# What it reads: the files git tracks or would track (untracked, not ignored) ending in .cpp,
# .hpp, .cu, .cuh, .cl, .comp or .glsl, outside tests/.
#
# A reason, always `shape: <why>`:
#   a file   - in its first 5 lines;
#   a function - on the line just before its first line (a comment);
#   either   - in scripts/check-shape.todo as `<path> shape: <why>` (the whole file, its
#              functions too) for files being split elsewhere.
#
# How a function is found (a heuristic, not a parser):
#   - it starts on a line at column 0, or indented 2 spaces (inside a class written at column
#     0), that is not a keyword line (namespace, struct, class, enum, if, for, return, ...),
#     has a '(' in its signature and whose signature ends with '{' within 12 lines;
#   - it ends at the line where the braces opened from there balance again (braces in string
#     and character literals and after // are not counted; /* */ comments are);
#   - its length counts both lines and everything between, comments and blank lines too.
# Limits: a definition indented deeper (a class inside a namespace written indented, a
# lambda, a local struct's members) is counted as part of the function around it; a
# signature with '{' in a default argument, or a macro that opens or closes a brace, can
# misplace the end; a brace-initialised variable at column 0 whose line ends with '{' and
# has a '(' before it is taken for a function.
set -euo pipefail
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"
exec python3 - "$root" <<'PY'
import os, re, subprocess, sys

MAX_FILE, MAX_FUNC = 600, 80
EXT = (".cpp", ".hpp", ".cu", ".cuh", ".cl", ".comp", ".glsl")
KEYWORDS = re.compile(r"^\s*(namespace|struct|class|enum|union|extern|public|private|protected|"
                      r"case|default|return|if|else|for|while|do|switch|using|typedef|template\s*<[^>]*>\s*(struct|class))\b")

def files():
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return sorted(f for f in set(out) if f.endswith(EXT) and not f.startswith("tests/")
                  and os.path.isfile(f))

def todo():
    allowed = {}
    try:
        with open("scripts/check-shape.todo") as t:
            for line in t:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                path, _, why = line.partition(" ")
                if "shape:" in why:
                    allowed[path] = why
    except FileNotFoundError:
        pass
    return allowed

def strip(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//")[0]

def functions(lines):
    """(first line index, last line index, name) of each function found."""
    found, i, n = [], 0, len(lines)
    in_comment = False
    while i < n:
        line = lines[i]
        if in_comment or not re.match(r"^( {0,2})[A-Za-z_~]", line) or KEYWORDS.match(line) \
                or line.rstrip().endswith(";"):
            if "/*" in line and "*/" not in line.split("/*", 1)[1]:
                in_comment = True
            if in_comment and "*/" in line:
                in_comment = False
            i += 1
            continue
        sig, j = "", i
        while j < n and j < i + 12:
            sig += strip(lines[j]) + " "
            end = strip(lines[j]).rstrip()
            if end.endswith(("{", ";", "}")):
                break
            j += 1
        end = strip(lines[j]).rstrip() if j < n else ""
        if j >= n or not end.endswith("{") or "(" not in sig or re.search(r"=\s*\{$", end):
            i += 1
            continue
        depth, k = 0, j
        while k < n:
            s = strip(lines[k])
            depth += s.count("{") - s.count("}")
            if depth <= 0:
                break
            k += 1
        name = re.sub(r"\s+", " ", sig.split("(")[0]).strip().split(" ")[-1]
        found.append((i, min(k, n - 1), name))
        i = k + 1
    return found

def main():
    allowed, bad = todo(), []
    for f in files():
        with open(f, errors="replace") as fh:
            lines = fh.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if f in allowed:
            continue
        if len(lines) > MAX_FILE and not any("shape:" in l for l in lines[:5]):
            bad.append(f"{f}: {len(lines)} lines (over {MAX_FILE}) and no 'shape: <reason>' "
                       "in its first 5 lines")
        for a, b, name in functions(lines):
            length = b - a + 1
            if length > MAX_FUNC and not (a > 0 and "shape:" in lines[a - 1]):
                bad.append(f"{f}:{a + 1}: {name} is {length} lines (over {MAX_FUNC}) and the "
                           "line before it has no 'shape: <reason>'")
    for b in bad:
        print(b)
    if bad:
        print(f"check-shape: {len(bad)} finding(s); split the file or function, or write why "
              "not ('shape: <reason>', see scripts/check-shape.sh)")
        return 1
    print("check-shape: every source file and function is within its limit or says why")
    return 0

sys.exit(main())
PY
