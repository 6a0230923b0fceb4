#!/usr/bin/env python3
"""Records MLX's convolutions and misc ops (pad, diag, diagonal, trace,
meshgrid, kron, tensordot, einsum, searchsorted, dynamic slice and
slice_update) into tests/refs/conv_misc.ref (replayed by
tests/conv_misc_test.cpp). Conv params: `kind` (conv/conv_transpose/general),
per-axis lists stride, pad, dil (kernel dilation), opad, groups; for general
lo, hi, idil, flip."""
import os
import sys

import mlx.core as mx
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_mlx_refs as R  # noqa: E402

RNG = np.random.default_rng(7)


def rnd(shape, dtype=mx.float32):
    return mx.array(RNG.uniform(-2, 2, size=shape).astype(np.float32)).astype(dtype)


def rint(shape, dtype=mx.int32, lo=-5, hi=6):
    return mx.array(RNG.integers(lo, hi, size=shape)).astype(dtype)


CONV = {1: mx.conv1d, 2: mx.conv2d, 3: mx.conv3d}
CONVT = {1: mx.conv_transpose1d, 2: mx.conv_transpose2d, 3: mx.conv_transpose3d}


def one(v, d):
    return v[0] if d == 1 else tuple(v)


def gen_conv(f):
    n = 0
    specs = []  # (d, N, spatial, C, O, K, stride, pad, dil, groups)
    for d in (1, 2, 3):
        sp = {1: [9], 2: [6, 5], 3: [4, 3, 4]}[d]
        ks = {1: [3], 2: [3, 2], 3: [2, 2, 2]}[d]
        for stride, pad, dil, groups, C, O in [
                (1, 0, 1, 1, 3, 4), (2, 1, 1, 1, 3, 2), (1, 2, 2, 1, 2, 3),
                (3, 1, 1, 2, 4, 6), (1, 0, 1, 4, 4, 4), (2, 0, 2, 1, 1, 1)]:
            specs.append((d, 2 if d < 3 else 1, sp, C, O, ks, [stride] * d, [pad] * d, [dil] * d, groups))
    specs.append((2, 1, [6, 5], 3, 2, [3, 3], [1, 2], [2, 0], [1, 2], 1))
    specs.append((2, 0, [4, 4], 2, 3, [1, 1], [1, 1], [0, 0], [1, 1], 1))
    for (d, N, sp, C, O, ks, stride, pad, dil, groups) in specs:
        dts = [("float32", mx.float32)] + ([("float16", mx.float16), ("bfloat16", mx.bfloat16)]
                                           if n % 4 == 0 else [])
        for dn, dt in dts:
            x = rnd([N] + sp + [C], dt)
            w = rnd([O] + ks + [C // groups], dt)
            views = ["c", "t"] if dn == "float32" and n % 2 == 0 and d < 3 else ["c"]
            for view in views:
                xi = R.make_in(x, view)
                p = {"kind": "conv", "stride": stride, "pad": pad, "dil": dil, "groups": groups}
                f.case("conv%dd_%d_%s_%s" % (d, n, dn, view), "conv", [xi, w],
                       lambda v, p, d=d: CONV[d](v[0], v[1], one(p["stride"], d),
                                                 one(p["pad"], d), one(p["dil"], d), p["groups"]), p)
            # transposed: weight [O, K..., C/groups] applied to an input with C channels
            for op_ in ([0] if max(stride) == 1 else [0, 1]):
                p = {"kind": "conv_transpose", "stride": stride, "pad": pad, "dil": dil,
                     "opad": [op_] * d, "groups": groups}
                f.case("convT%dd_%d_%s_%d" % (d, n, dn, op_), "conv", [x, w],
                       lambda v, p, d=d: CONVT[d](v[0], v[1], one(p["stride"], d), one(p["pad"], d),
                                                  one(p["dil"], d), one(p["opad"], d), p["groups"]), p)
        n += 1
    # conv_general: asymmetric and negative padding, input dilation, flip
    for i, (lo, hi, idil, flip, groups) in enumerate([
            ([1, 0], [0, 2], [1, 1], False, 1), ([2, 1], [1, 2], [2, 1], True, 1),
            ([-1, 0], [0, -1], [1, 1], False, 1), ([0, 1], [1, 0], [2, 3], True, 2)]):
        x = rnd([2, 5, 6, 4])
        w = rnd([4, 2, 3, 4 // groups])
        p = {"kind": "general", "stride": [1, 2], "lo": lo, "hi": hi, "dil": [1, 1],
             "idil": idil, "groups": groups, "flip": flip}
        f.case("conv_general_%d" % i, "conv", [x, w],
               lambda v, p: mx.conv_general(v[0], v[1], p["stride"], (p["lo"], p["hi"]),
                                            p["dil"], p["idil"], p["groups"], p["flip"]), p)
    # mixed float dtypes promote
    f.case("conv_mixed", "conv", [rnd([1, 5, 2], mx.float16), rnd([3, 2, 2])],
           lambda v, p: mx.conv1d(v[0], v[1]), {"kind": "conv", "stride": [1], "pad": [0],
                                                "dil": [1], "groups": 1})
    errs = [([1, 5, 3], [4, 2, 2], 1, mx.float32),  # channels
            ([1, 5, 3], [4, 2, 3], 2, mx.float32),  # groups do not divide C
            ([1, 5, 4], [3, 2, 2], 2, mx.float32),  # groups do not divide O
            ([1, 5, 3], [4, 9, 3], 1, mx.float32),  # kernel larger than input
            ([1, 5, 3], [4, 2, 3], 1, mx.int32),  # integer input
            ([5, 3], [4, 2, 3], 1, mx.float32)]  # rank
    for i, (xs, ws, g, dt) in enumerate(errs):
        x = rnd(xs).astype(dt)
        w = rnd(ws)
        f.case("conv_err_%d" % i, "conv", [x, w], lambda v, p: mx.conv1d(v[0], v[1], groups=p["groups"]),
               {"kind": "conv", "stride": [1], "pad": [0], "dil": [1], "groups": g})
    for i, (st, dl) in enumerate([(0, 1), (1, 0)]):
        f.case("conv_err_param_%d" % i, "conv", [rnd([1, 5, 3]), rnd([4, 2, 3])],
               lambda v, p: mx.conv1d(v[0], v[1], p["stride"][0], 0, p["dil"][0]),
               {"kind": "conv", "stride": [st], "pad": [0], "dil": [dl], "groups": 1})


DTYPES = [("int32", mx.int32), ("float32", mx.float32), ("float16", mx.float16),
          ("bool", mx.bool_), ("uint8", mx.uint8), ("bfloat16", mx.bfloat16)]


def gen_misc(f):
    for dn, dt in DTYPES:
        x = rint([3, 4], dt, 0, 5) if dn == "bool" else rint([3, 4], dt, 0, 9)
        for i, (pw, mode, cv) in enumerate([([(1, 1)], "constant", 0), ([(0, 2), (1, 0)], "constant", 3),
                                            ([(2, 1)], "edge", 0), ([(0, 0), (3, 1)], "edge", 0)]):
            f.case("pad_%s_%d" % (dn, i), "pad", [R.make_in(x, "t" if i % 2 else "c")],
                   lambda v, p, pw=pw: mx.pad(v[0], pw, p["cv"], mode=p["mode"]),
                   {"pw": [a for q in pw for a in q], "mode": mode, "cv": cv})
        for k in (-2, 0, 1, 5):
            f.case("diag2_%s_%d" % (dn, k), "diag", [R.make_in(x, "t")], lambda v, p: mx.diag(v[0], p["k"]), {"k": k})
            f.case("diag1_%s_%d" % (dn, k), "diag", [x[0]], lambda v, p: mx.diag(v[0], p["k"]), {"k": k})
        y = rint([2, 3, 4], dt, 0, 9)
        for i, (off, a1, a2) in enumerate([(0, 0, 1), (1, 1, 2), (-1, 2, 0), (0, -1, -2), (9, 0, 1)]):
            f.case("diagonal_%s_%d" % (dn, i), "diagonal", [y],
                   lambda v, p: mx.diagonal(v[0], p["off"], p["a1"], p["a2"]), {"off": off, "a1": a1, "a2": a2})
            if off == 9 and dn not in ("int32", "float32"):
                continue  # MLX 0.32.4 hangs on an empty 16-bit trace
            f.case("trace_%s_%d" % (dn, i), "trace", [y],
                   lambda v, p: mx.trace(v[0], p["off"], p["a1"], p["a2"]), {"off": off, "a1": a1, "a2": a2})
        f.case("kron_%s" % dn, "kron", [x[:2, :3], rint([2, 2], dt, 0, 3)], lambda v, p: mx.kron(v[0], v[1]))
    f.case("trace_dtype", "trace", [rint([3, 3], mx.int8)],
           lambda v, p: mx.trace(v[0], dtype=mx.float32), {"off": 0, "a1": 0, "a2": 1, "dtype": "float32"})
    f.case("diagonal_err", "diagonal", [rint([3, 3])], lambda v, p: mx.diagonal(v[0], 0, 1, 1),
           {"off": 0, "a1": 1, "a2": 1})
    f.case("diag_err", "diag", [rint([2, 2, 2])], lambda v, p: mx.diag(v[0], 0), {"k": 0})
    f.case("pad_err", "pad", [rint([3])], lambda v, p: mx.pad(v[0], [(-1, 0)]),
           {"pw": [-1, 0], "mode": "constant", "cv": 0})
    f.case("kron_3d", "kron", [rnd([2, 1, 2]), rnd([3, 2])], lambda v, p: mx.kron(v[0], v[1]))
    f.case("kron_0d", "kron", [mx.array(2.0), rnd([2, 3])], lambda v, p: mx.kron(v[0], v[1]))
    for ix in ("xy", "ij"):
        for sp in (False, True):
            for k in (1, 2, 3):
                ins = [rint([2]), rint([3], mx.float32), rint([4])][:k]
                f.case("meshgrid_%s_%d_%d" % (ix, sp, k), "meshgrid", ins,
                       lambda v, p: mx.meshgrid(*v, sparse=p["sparse"], indexing=p["ix"]),
                       {"sparse": sp, "ix": ix})
    for i, (sa, sb, ax) in enumerate([([3, 4], [4, 5], 1), ([2, 3, 4], [3, 4, 2], 2), ([3], [2], 0),
                                      ([2, 3, 4], [4, 3], ([1, 2], [1, 0])), ([3, 4], [3, 4], ([0], [1]))]):
        for dn, dt in [("float32", mx.float32), ("float16", mx.float16), ("int32", mx.int32)]:
            a = rint(sa, dt, -3, 4) if dn == "int32" else rnd(sa, dt)
            b = rint(sb, dt, -3, 4) if dn == "int32" else rnd(sb, dt)
            p = {"axes": ax} if isinstance(ax, int) else {"axes_a": ax[0], "axes_b": ax[1]}
            f.case("tensordot_%s_%d" % (dn, i), "tensordot", [a, b],
                   lambda v, p: mx.tensordot(v[0], v[1], p["axes"] if "axes" in p else [p["axes_a"], p["axes_b"]]), p)
    EIN = [("ij,jk->ik", [[3, 4], [4, 5]]), ("ij,jk", [[3, 4], [4, 2]]), ("ii->i", [[3, 3]]),
           ("ii", [[4, 4]]), ("ij->ji", [[2, 3]]), ("ij->", [[2, 3]]), ("i,i->", [[5], [5]]),
           ("i,j->ij", [[2], [3]]), ("bij,bjk->bik", [[2, 3, 4], [2, 4, 2]]),
           ("ijk,jil->kl", [[2, 3, 4], [3, 2, 5]]), ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]]),
           ("...ij,...jk->...ik", [[2, 2, 3], [2, 3, 4]]), ("i...->...", [[3, 2, 2]]),
           ("iij->ji", [[3, 3, 2]]), ("ab,ab->a", [[3, 4], [3, 4]]), ("ij,k->ijk", [[2, 2], [3]])]
    for i, (sub, shapes) in enumerate(EIN):
        for dn, dt in [("float32", mx.float32), ("int32", mx.int32)]:
            ins = [rint(s, dt, -3, 4) if dn == "int32" else rnd(s, dt) for s in shapes]
            f.case("einsum_%s_%d" % (dn, i), "einsum", ins, lambda v, p: mx.einsum(p["sub"], *v), {"sub": sub})
    for i, (sub, shapes) in enumerate([("ij,jk->ik", [[3, 4], [5, 5]]), ("ij->k", [[2, 2]]), ("ij,jk->ik", [[3, 4]])]):
        f.case("einsum_err_%d" % i, "einsum", [rnd(s) for s in shapes],
               lambda v, p: mx.einsum(p["sub"], *v), {"sub": sub})
    srt = mx.array([1.0, 2.0, 2.0, 3.0, 5.0, float("nan")])
    vals = mx.array([[0.0, 2.0, 2.5], [5.0, 9.0, float("nan")]])
    for side in ("left", "right"):
        f.case("searchsorted_f_%s" % side, "searchsorted", [srt, vals],
               lambda v, p: mx.searchsorted(v[0], v[1], side=p["side"]), {"side": side})
        f.case("searchsorted_i_%s" % side, "searchsorted", [mx.array([-3, 0, 0, 4, 7]), mx.array([-4, 0, 4, 8, 1])],
               lambda v, p: mx.searchsorted(v[0], v[1], side=p["side"]), {"side": side})
        f.case("searchsorted_empty_%s" % side, "searchsorted", [mx.zeros((0,)), mx.array([1.0])],
               lambda v, p: mx.searchsorted(v[0], v[1], side=p["side"]), {"side": side})
    m = mx.arange(30, dtype=mx.float32).reshape(5, 6)
    for i, (start, axes, size) in enumerate([([1, 2], [0, 1], [2, 3]), ([3], [1], [5, 3]), ([0], [0], [5, 6]),
                                             ([2], [-1], [2, 4]), ([4, 0], [0, 1], [1, 6])]):
        f.case("slice_dyn_%d" % i, "slice_dyn", [R.make_in(m, "t" if i % 2 else "c"), mx.array(start)],
               lambda v, p: mx.slice(v[0], v[1], p["axes"], p["size"]), {"axes": axes, "size": size})
        ushape = mx.slice(m, mx.array(start), axes, size).shape
        upd = mx.arange(int(np.prod(ushape)), dtype=mx.float32).reshape(ushape) + 100
        f.case("slice_update_%d" % i, "slice_update", [m, upd, mx.array(start)],
               lambda v, p: mx.slice_update(v[0], v[1], v[2], p["axes"]), {"axes": axes})


def main():
    mx.set_default_device(mx.cpu)
    f = R.RefFile("conv_misc.ref", "convolutions and misc ops (tools/record_mlx_conv_misc.py)")
    gen_conv(f)
    gen_misc(f)
    size = f.write()
    assert size < 300_000, size


if __name__ == "__main__":
    main()
