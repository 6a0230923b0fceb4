#!/usr/bin/env python3
"""Summarizes an ncu CSV of gpu__time_duration (ncu --csv --print-units base
--metrics gpu__time_duration.sum PROGRAM > FILE): the kernels of the last
--last launches grouped by name (count, total and mean microseconds, grid),
largest total first, then that window's launches in order (--sequence).
Used by scripts/gpu.sh's `profile` mode on a decode run of nuvec-lm bench."""
import argparse
import csv
import sys
from collections import OrderedDict


def rows(path):
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    for r in csv.DictReader(lines):
        if r.get("Metric Name") == "gpu__time_duration.sum":
            yield r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--last", type=int, default=0, help="only the last N launches")
    ap.add_argument("--steps", type=int, default=1, help="divide counts and totals by this")
    ap.add_argument("--sequence", action="store_true")
    ap.add_argument("--width", type=int, default=90)
    a = ap.parse_args()
    launches = []
    for r in rows(a.csv):
        v = float(r["Metric Value"].replace(",", ""))
        unit = r.get("Metric Unit", "ns")
        us = v / 1e3 if unit in ("ns", "nsecond") else v * 1e6 if unit in ("s", "second") else v
        launches.append((r["Kernel Name"], us, r.get("Grid Size", ""), r.get("Block Size", "")))
    if a.last:
        launches = launches[-a.last:]
    if not launches:
        print("no launches in", a.csv)
        return 1
    total = sum(u for _, u, _, _ in launches)
    groups = OrderedDict()
    for name, us, grid, block in launches:
        key = (name[: a.width], grid)
        g = groups.setdefault(key, [0, 0.0])
        g[0] += 1
        g[1] += us
    s = a.steps
    print(f"{len(launches)} launches, {total:.1f} us of kernels; per step ({s}): "
          f"{len(launches) / s:.1f} launches, {total / s:.1f} us")
    print(f"| kernel | grid | count/step | us/step | mean us | share |")
    print("|---|---|---:|---:|---:|---:|")
    for (name, grid), (n, us) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        print(f"| {name} | {grid} | {n / s:.1f} | {us / s:.1f} | {us / n:.2f} | {100 * us / total:.1f}% |")
    if a.sequence:
        print("\nsequence:")
        for name, us, grid, block in launches:
            print(f"{us:8.2f}  {grid:>16} {block:>12}  {name[: a.width]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
