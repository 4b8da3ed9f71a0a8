#!/usr/bin/env python3
"""Figure ids and statuses of two gpudissect results: what was added, removed or changed.

Usage: scripts/figure_diff.py OLD.json[.gz] NEW.json[.gz] [--fail-on-diff]

Prints, each part sorted by id:
  added (N):           + ID STATUS (reason)
  removed (N):         - ID STATUS (reason)
  status changed (N):  ~ ID: OLD -> NEW (NEW's reason)
A reason is printed where the figure has one.
  counts: old N, new N, added N, removed N, changed N, same N
Values are not compared: a refactor keeps ids and statuses, a re-measurement moves values.
Exit 0 (1 with --fail-on-diff when anything differs); 2 when an input cannot be read or is
not a gpudissect result (the message names the file).
"""
import argparse
import gzip
import json
import sys


class BadInput(Exception):
    pass


def load_figures(path):
    """Returns {id: (status, reason)} of a result file's figures list."""
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, EOFError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise BadInput(f"{path}: cannot read it as JSON: {e}") from e
    if not isinstance(doc, dict):
        raise BadInput(f"{path}: not a gpudissect result (the top level is not an object)")
    tool = doc.get("tool")
    if not isinstance(tool, dict) or tool.get("name") != "gpudissect":
        raise BadInput(f"{path}: not a gpudissect result (no tool.name \"gpudissect\")")
    figures = doc.get("figures")
    if not isinstance(figures, list):
        raise BadInput(f"{path}: no figures list (a schema 1 result: "
                       "`gpudissect report --json` writes one with its figures)")
    out = {}
    for i, fig in enumerate(figures):
        if (not isinstance(fig, dict) or not isinstance(fig.get("id"), str)
                or not isinstance(fig.get("status"), str)):
            raise BadInput(f"{path}: figures[{i}] has no string id and status")
        if fig["id"] in out:
            # Two figures with one id would make the comparison ambiguous; a result never has.
            raise BadInput(f"{path}: figure id {fig['id']!r} appears twice")
        reason = fig.get("reason")
        out[fig["id"]] = (fig["status"], reason if isinstance(reason, str) else "")
    return out


def why(entry):
    return f" ({entry[1]})" if entry[1] else ""


def diff_lines(old, new):
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    changed = sorted(i for i in set(old) & set(new) if old[i][0] != new[i][0])
    lines = [f"added ({len(added)}):"]
    lines += [f"  + {i} {new[i][0]}{why(new[i])}" for i in added]
    lines.append(f"removed ({len(removed)}):")
    lines += [f"  - {i} {old[i][0]}{why(old[i])}" for i in removed]
    lines.append(f"status changed ({len(changed)}):")
    lines += [f"  ~ {i}: {old[i][0]} -> {new[i][0]}{why(new[i])}" for i in changed]
    same = len(set(old) & set(new)) - len(changed)
    lines.append(f"counts: old {len(old)}, new {len(new)}, added {len(added)}, "
                 f"removed {len(removed)}, changed {len(changed)}, same {same}")
    return lines, bool(added or removed or changed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", help="the result before (.json or .json.gz)")
    ap.add_argument("new", help="the result after (.json or .json.gz)")
    ap.add_argument("--fail-on-diff", action="store_true",
                    help="exit 1 when an id was added or removed or a status changed")
    args = ap.parse_args()
    try:
        old = load_figures(args.old)
        new = load_figures(args.new)
    except BadInput as e:
        print(f"figure_diff.py: {e}", file=sys.stderr)
        return 2
    lines, differs = diff_lines(old, new)
    print(f"figures: {args.old} -> {args.new}")
    print("\n".join(lines))
    return 1 if differs and args.fail_on_diff else 0


if __name__ == "__main__":
    sys.exit(main())
