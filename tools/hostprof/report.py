#!/usr/bin/env python3
"""Symbolizes hostprof.c's samples: the functions with the most samples on
top of the stack (self) and anywhere in it (inclusive), as shares of all.

  python3 tools/hostprof/report.py PROF [--lib DIR ...] [--top N] [--under NAME]

PROF and PROF.maps come from a run with HOSTPROF_OUT=PROF. Modules are
looked up by file name in each --lib folder (binaries carried from here to
the machine that ran them), then, with --here, by their path; those not
found are shown as [name]. --under keeps only the stacks through a function whose name
contains NAME."""
import argparse
import collections
import os
import struct
import subprocess
import sys

DEPTH = 40


def read_maps(path):
    maps = []
    for line in open(path):
        f = line.split()
        if len(f) < 6 or 'x' not in f[1]:
            continue
        lo, hi = (int(v, 16) for v in f[0].split('-'))
        maps.append((lo, hi, int(f[2], 16), f[5]))
    return maps


def locate(module, libs, here):
    for d in libs:
        p = os.path.join(d, os.path.basename(module))
        if os.path.exists(p):
            return p
    return module if here and os.path.exists(module) else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('prof')
    ap.add_argument('--lib', action='append', default=[])
    ap.add_argument('--top', type=int, default=40)
    ap.add_argument('--under', default=None)
    ap.add_argument('--here', action='store_true', help='the samples were taken on this machine')
    a = ap.parse_args()
    maps = read_maps(a.prof + '.maps')
    raw = open(a.prof, 'rb').read()
    n = len(raw) // (8 * DEPTH)
    stacks = [struct.unpack_from('<%dQ' % DEPTH, raw, i * 8 * DEPTH) for i in range(n)]

    def where(addr):
        for lo, hi, off, mod in maps:
            if lo <= addr < hi:
                return mod, addr - lo + off
        return None, addr

    todo = collections.defaultdict(set)
    for s in stacks:
        for addr in s:
            if addr:
                mod, rel = where(addr)
                if mod:
                    todo[mod].add(rel - 1)
    names = {}
    for mod, rels in todo.items():
        path = locate(mod, a.lib, a.here)
        base = os.path.basename(mod)
        rels = sorted(rels)
        if not path:
            for r in rels:
                names[(mod, r)] = '[%s]' % base
            continue
        out = subprocess.run(['addr2line', '-f', '-C', '-e', path] + ['%x' % r for r in rels],
                             capture_output=True, text=True).stdout.splitlines()
        for i, r in enumerate(rels):
            fn = out[2 * i] if 2 * i < len(out) else '??'
            names[(mod, r)] = fn if fn != '??' else '[%s]' % base

    self_c, incl = collections.Counter(), collections.Counter()
    kept = 0
    for s in stacks:
        frames = []
        for addr in s:
            if not addr:
                break
            mod, rel = where(addr)
            frames.append(names.get((mod, rel - 1), '[?]') if mod else '[?]')
        # drop the handler's own frames and the signal trampoline
        while frames and (frames[0] in ('on_prof', '[hostprof.so]') or 'hostprof' in frames[0]):
            frames.pop(0)
        if frames and ('restore_rt' in frames[0] or 'sigaction' in frames[0] or frames[0] == '[libc.so.6]'):
            frames.pop(0)
        if not frames:
            continue
        if a.under and not any(a.under in f for f in frames):
            continue
        kept += 1
        self_c[frames[0]] += 1
        for f in set(frames):
            incl[f] += 1
    print('%d samples (%d kept)' % (n, kept))
    for title, c in (('self', self_c), ('inclusive', incl)):
        print('\n== %s ==' % title)
        for fn, k in c.most_common(a.top):
            print('%6.2f%%  %s' % (100.0 * k / max(kept, 1), fn[:160]))


if __name__ == '__main__':
    sys.exit(main())
