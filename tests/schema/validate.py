#!/usr/bin/env python3
"""Validates gpudissect JSON files against docs/schema (run and fleet JSON).

Usage: validate.py SCHEMA_DIR FILE...   (.json or .json.gz; a fleet JSON is told from a run
JSON by its fleet_schema_version key)
Prints one line per file; exit 0 when every file is valid, 1 when one is not, 2 on bad use.
Works with Debian 12's python3-jsonschema (4.10) and later releases (4.18+ resolve $ref
through the `referencing` library; older ones through RefResolver).
"""
import gzip
import json
import sys
from pathlib import Path

try:
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError as e:  # pragma: no cover - reported, not hidden
    print(f"validate.py: python3-jsonschema is not installed ({e})", file=sys.stderr)
    sys.exit(77)

SCHEMAS = ("run.schema.json", "fleet.schema.json")


def load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def validators(schema_dir):
    # The files carry no $id (they are published by path, not at a URL): each gets its file's
    # URI here, so that fleet's relative "$ref": "run.schema.json#..." resolves to its neighbour.
    base = Path(schema_dir).resolve().as_uri() + "/"
    schemas = {}
    for name in SCHEMAS:
        s = load(Path(schema_dir) / name)
        Draft202012Validator.check_schema(s)
        schemas[base + name] = dict(s, **{"$id": base + name})
    try:
        from referencing import Registry, Resource

        registry = Registry().with_resources(
            (uri, Resource.from_contents(s)) for uri, s in schemas.items())
        make = lambda s: Draft202012Validator(s, registry=registry)
    except ImportError:  # jsonschema before 4.18: no referencing library
        def make(s):
            resolver = jsonschema.RefResolver.from_schema(s, store=schemas)
            return Draft202012Validator(s, resolver=resolver)
    return {name: make(schemas[base + name]) for name in SCHEMAS}


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    v = validators(argv[1])
    bad = 0
    for f in argv[2:]:
        try:
            doc = load(f)
        except (OSError, ValueError) as e:
            print(f"INVALID {f}: cannot read: {e}")
            bad += 1
            continue
        kind = "fleet.schema.json" if isinstance(doc, dict) and "fleet_schema_version" in doc \
            else "run.schema.json"
        errors = sorted(v[kind].iter_errors(doc), key=lambda e: list(e.absolute_path))
        if not errors:
            print(f"ok {f} ({kind})")
            continue
        bad += 1
        for e in errors[:5]:
            where = "/".join(str(p) for p in e.absolute_path) or "(top)"
            print(f"INVALID {f} ({kind}) at {where}: {e.message[:300]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
