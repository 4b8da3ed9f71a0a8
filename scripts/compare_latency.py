#!/usr/bin/env python3
"""Repeatability of two latency results: plateau latencies and capacity brackets, level by level.

Usage: scripts/compare_latency.py A.json B.json [--max-latency-diff 0.02]
Exits 1 when a plateau latency differs by more than the limit or a capacity by more than one
refinement step (2^(1/8)); prints a table either way.
"""
import argparse
import json
import sys

STEP = 2 ** (1 / 8)


def levels(doc):
    lat = doc["probes"]["latency"]
    out = {}
    for kind in ("paths", "tlb"):
        for curve, c in lat.get(kind, {}).items():
            for lv in c.get("levels", []):
                out[(curve, lv["name"])] = lv
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--max-latency-diff", type=float, default=0.02)
    args = ap.parse_args()
    a, b = (levels(json.load(open(p))) for p in (args.a, args.b))
    bad = 0
    print(f"{'curve':10} {'level':15} {'lat A':>8} {'lat B':>8} {'diff':>7} {'cap A':>12} {'cap B':>12} {'steps':>6}")
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            print(f"{key[0]:10} {key[1]:15} found in one run only")
            bad += 1
            continue
        la, lb = a[key], b[key]
        unit = "latency_cycles" if "latency_cycles" in la else "latency_ns"
        d = abs(la[unit] - lb[unit]) / la[unit]
        ca, cb = la.get("capacity_bytes"), lb.get("capacity_bytes")
        steps = ""
        if ca and cb:
            import math
            steps = f"{abs(math.log(ca / cb, STEP)):.1f}"
            if abs(math.log(ca / cb, STEP)) > 1.01:
                bad += 1
        if d > args.max_latency_diff:
            bad += 1
        print(f"{key[0]:10} {key[1]:15} {la[unit]:8.1f} {lb[unit]:8.1f} {100*d:6.2f}% {ca or '-':>12} {cb or '-':>12} {steps:>6}")
    print("repeatable" if not bad else f"{bad} differences beyond the limits")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
