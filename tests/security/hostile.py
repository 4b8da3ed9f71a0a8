#!/usr/bin/env python3
"""Writes a hostile copy of a gpudissect result JSON: text that would run a command if it
reached gnuplot or a shell unquoted, and script if it reached HTML unescaped, appended to
every string value and to every key of the maps whose keys are data (curve keys, figure
ids, op names).

  hostile.py SOURCES_DIR IN.json OUT.json MODE

The commands touch files named sq, dq, bt, sh, nl, eod in the current folder of whatever
runs them. In "text" mode the text has no / at all: a / in a name made the file name it
became part of impossible to create, which stopped the chart before gnuplot saw the text;
the other modes add closing tags (</script>, </title>, ]]>...).

MODE "text": every string value except "status" (so that figures stay "ok" and their
charts are drawn) and the enums the reader checks (ENUMS); "keys": every map key (the
sections look some keys up by name, so fewer charts remain); "all": both; "status": both,
and the "status" values as well; "html": the string values as in "text", with markup only
(nothing gnuplot would stumble on, so that the charts are drawn with it in their names).
SOURCES_DIR is the project root: the map fields are read from the model's headers, so that
a new map is covered without touching this file.
"""
import glob
import json
import re
import sys


def payload(mode):
    # Each quoting context's first way out runs a command and leaves a line gnuplot can
    # parse to its end (a comment, #, takes the rest), since gnuplot reads a whole line
    # before it runs any of it and stops a script at its first error: a single-quoted
    # gnuplot string ends at the first ', a double-quoted one at the first " (and runs
    # backticks inside), a line break starts a new command, an inline data block ends at a
    # line "EOD", a shell takes $(...). The HTML part has no ' (it would end a gnuplot
    # string first) and no literal PWNED (the check looks for the title a script would set).
    js = "document.title=String.fromCharCode(80,87,78,69,68)"
    if mode == "html":
        return f'"><img src=x onerror={js}><svg onload={js}>'
    return (
        "'.system('touch sq')#"
        '".system("touch dq")#'
        "`touch bt`"
        "$(touch sh)"
        "\n!touch nl\nEOD\n!touch eod\n"
        f'"><img src=x onerror={js}><svg onload={js}>'
        + (f"<script>{js}</script>]]></svg></title></style></textarea><svg onload={js}>"
           if mode != "text" else "")
    )


# Values the reader checks against a list (a hostile one is rejected with exit 2, which is
# right, but would leave the rest of the file untested).
ENUMS = {"load"}


def map_fields(root):
    fields = set()
    pat = re.compile(r"std::map<std::string,\s*[\w:<>, ]+>\s+(\w+)\s*;")
    for h in glob.glob(f"{root}/core/include/gpudissect/*.hpp"):
        fields.update(pat.findall(open(h, encoding="utf-8").read()))
    return fields


def main():
    root, src, dst, mode = sys.argv[1:5]
    p = payload(mode)
    maps = map_fields(root)
    doc = json.load(open(src, encoding="utf-8"))

    def is_map(key, obj, parent):
        # A map field's object, told from a struct of the same name by its values, all of
        # one JSON type (a struct mixes them). The object of a probe under "probes"
        # ("latency" is a probe and an atomics map) is a struct.
        kinds = {type(v).__name__ for v in obj.values()} if isinstance(obj, dict) else set()
        return (key in maps and parent != "probes" and key != "probes" and len(kinds) == 1)

    def walk(x, key=None, parent=None):
        if isinstance(x, dict):
            data_keys = mode not in ("text", "html") and is_map(key, x, parent)
            return {(k + p if data_keys else k): walk(v, k, key) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v, key, parent) for v in x]
        if (isinstance(x, str) and mode != "keys" and key not in ENUMS
                and (key != "status" or mode == "status")):
            return x + p
        return x

    json.dump(walk(doc), open(dst, "w", encoding="utf-8"))


main()
