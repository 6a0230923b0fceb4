#!/usr/bin/env python3
"""Record MLX reference values for sorting, scans and joining into
tests/refs/sort_scan.ref (the format of tools/record_mlx_refs.py, whose
helpers this script reuses).

Usage: python3 tools/record_mlx_sort_scan.py

Params: axis is an int or "none" (MLX's axis=None: the flattened array);
partition/argpartition take kth, topk k; scans reverse and inclusive;
split takes sections or indices; roll shift/axis or shifts/axes lists.
"""

import os
import sys

import numpy as np
import mlx.core as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_mlx_refs as R  # noqa: E402

NAN = float("nan")
ALL = R.DTYPES
REAL = [d for d in ALL if d != "complex64"]
SOME = ["bool", "uint8", "int16", "int32", "uint64", "float16", "bfloat16", "float32", "float64"]
FEW = ["bool", "int32", "float16", "float32"]
FLOATS = R.FLOATS


def ax(p):
    return None if p["axis"] == "none" else p["axis"]


def vals(rng, dt, shape, dom="any"):
    return R.rand_arr(rng, dt, shape, dom)


def with_nans(rng, dt, shape):
    v = R.rand_vals(rng, dt, shape, "wide")
    if dt in FLOATS:
        v = np.asarray(v, dtype=np.float64)
        v[rng.random(shape) < 0.25] = NAN
        v.flat[0] = -0.0
    return R.mk(v, dt)


def dup_ints(rng, dt, shape):
    """Few distinct values: ties exercise stability and argpartition."""
    if dt == "bool":
        return R.mk(rng.integers(0, 2, shape).astype(bool), dt)
    return R.mk(rng.integers(0, 5, shape).astype(np.float64), dt)


def views(x):
    """The same op-visible value as c, t (2-D+), s and b operands."""
    out = [("c", R.make_in(x, "c"))]
    if x.ndim >= 2:
        out.append(("t", R.make_in(x, "t")))
    if x.ndim >= 1 and x.shape[-1] > 0:
        out.append(("s", R.make_in(x, "s")))
    return out


def gen_sort(f):
    sort_fns = {
        "sort": lambda xs, p: mx.sort(xs[0], axis=ax(p)),
        "argsort": lambda xs, p: mx.argsort(xs[0], axis=ax(p)),
        "partition": lambda xs, p: mx.partition(xs[0], p["kth"], axis=ax(p)),
        "argpartition": lambda xs, p: mx.argpartition(xs[0], p["kth"], axis=ax(p)),
        "topk": lambda xs, p: mx.topk(xs[0], p["k"], axis=ax(p)),
    }
    for op, fn in sort_fns.items():
        extra = lambda n: {}  # noqa: E731
        if op in ("partition", "argpartition"):
            extra = lambda n: {"kth": n // 3}  # noqa: E731
        if op == "topk":
            extra = lambda n: {"k": max(1, n // 4)}  # noqa: E731
        for dt in ALL:
            rng = R.rng_for("sort", op, dt)
            if dt == "complex64" and op == "topk":
                continue
            x = vals(rng, dt, (2, 10), "wide")
            for axis in ((-1, 0, "none") if dt in FEW else (-1,)):
                n = x.size if axis == "none" else x.shape[axis]
                f.case("%s_%s_ax%s" % (op, dt, axis), op, [x], fn, dict(axis=axis, **extra(n)))
            if dt in ("bool", "int32", "float32"):
                y = dup_ints(rng, dt, (2, 25))
                for v, inp in views(y)[: (3 if dt == "float32" else 1)]:
                    f.case("%s_%s_dup_%s" % (op, dt, v), op, [inp], fn, dict(axis=-1, **extra(25)))
                    f.case("%s_%s_dup_%s_ax0" % (op, dt, v), op, [inp], fn, dict(axis=0, **extra(4)))
            if dt in FLOATS:
                z = with_nans(rng, dt, (2, 13))
                f.case("%s_%s_nan" % (op, dt), op, [z], fn, dict(axis=1, **extra(13)))
                if dt in ("float16", "float32"):
                    f.case("%s_%s_nan_flat" % (op, dt), op, [z], fn, dict(axis="none", **extra(26)))
        x = vals(R.rng_for("sort", op, "b"), "float32", (5, 1))
        f.case("%s_bcast" % op, op, [R.make_in(x, "b", (5, 6))], fn, dict(axis=-1, **extra(6)))
        f.case("%s_0d_flat" % op, op, [R.mk(np.array(3.0), "float32")], fn, dict(axis="none", **extra(1)))
        f.case("%s_empty" % op, op, [mx.zeros((0, 4))], fn, dict(axis=0, **extra(1)) if op == "topk" else dict(axis=1, **extra(4)))
        f.case("%s_err_axis" % op, op, [mx.zeros((2, 3))], fn, dict(axis=2, **extra(3)))
        f.case("%s_err_0d" % op, op, [R.mk(np.array(3.0), "float32")], fn, dict(axis=-1, **extra(1)))
    for op in ("partition", "argpartition"):
        fn = sort_fns[op]
        x = vals(R.rng_for("part", op), "int32", (50,), "wide")
        for kth in (0, 25, 49, -7, 50, -51):
            f.case("%s_kth%d" % (op, kth), op, [x], fn, dict(kth=kth, axis=0))
    x = vals(R.rng_for("topk"), "float32", (6, 9))
    for k in (0, 1, 9, 10, -1):
        f.case("topk_k%d" % k, "topk", [x], sort_fns["topk"], dict(k=k, axis=1))


SCANS = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]


def scan_fn(op):
    g = getattr(mx, op)
    return lambda xs, p: g(xs[0], axis=ax(p), reverse=p["reverse"], inclusive=p["inclusive"])


def gen_scan(f):
    for op in SCANS:
        fn = scan_fn(op)
        dom = "near1" if op == "cumprod" else "small"
        for dt in ALL:
            rng = R.rng_for("scan", op, dt)
            x = vals(rng, dt, (2, 3, 4) if dt == "float32" else (2, 6), dom)
            full = dt == "float32"
            for axis in ((0, 1, -1, "none") if full else (-1,)):
                for rev in (False, True):
                    for inc in (True, False):
                        if not full and rev != (not inc):
                            continue
                        f.case("%s_%s_ax%s_%s%s" % (op, dt, axis, "r" if rev else "f", "i" if inc else "e"),
                               op, [x], fn, dict(axis=axis, reverse=rev, inclusive=inc))
            if dt in ("int32", "float32"):
                y = vals(rng, dt, (4, 5), dom)
                for v, inp in views(y):
                    f.case("%s_%s_%s" % (op, dt, v), op, [inp], fn, dict(axis=0, reverse=False, inclusive=True))
                    f.case("%s_%s_%s_re" % (op, dt, v), op, [inp], fn, dict(axis=-1, reverse=True, inclusive=False))
            if dt in FLOATS:
                z = with_nans(rng, dt, (2, 9))
                f.case("%s_%s_nan" % (op, dt), op, [z], fn, dict(axis=1, reverse=False, inclusive=True))
        ints = R.int_edge("int8")
        f.case("%s_int8_wrap" % op, op, [R.mk(np.array(ints * 3, dtype=np.int8), "int8")], fn,
               dict(axis=0, reverse=False, inclusive=True))
        f.case("%s_long" % op, op, [vals(R.rng_for("long", op), "float32", (64,), dom)], fn,
               dict(axis=0, reverse=False, inclusive=True))
        x = vals(R.rng_for("scanb", op), "float32", (1, 5))
        f.case("%s_bcast" % op, op, [R.make_in(x, "b", (4, 5))], fn, dict(axis=0, reverse=True, inclusive=True))
        f.case("%s_0d_flat" % op, op, [R.mk(np.array(2.0), "float32")], fn, dict(axis="none", reverse=False, inclusive=True))
        f.case("%s_empty" % op, op, [mx.zeros((0, 3))], fn, dict(axis=1, reverse=False, inclusive=False))
        f.case("%s_err_axis" % op, op, [mx.zeros((2, 3))], fn, dict(axis=-3, reverse=False, inclusive=True))
        f.case("%s_err_0d" % op, op, [R.mk(np.array(2.0), "float32")], fn, dict(axis=0, reverse=False, inclusive=True))


def gen_join(f):
    cat = lambda xs, p: mx.concatenate(xs, axis=ax(p))  # noqa: E731
    stk = lambda xs, p: mx.stack(xs, axis=p["axis"])  # noqa: E731
    for dt in ALL:
        rng = R.rng_for("join", dt)
        a, b = vals(rng, dt, (2, 3)), vals(rng, dt, (2, 5))
        f.case("concatenate_%s" % dt, "concatenate", [a, b], cat, dict(axis=1))
        f.case("concatenate_%s_flat" % dt, "concatenate", [a, b], cat, dict(axis="none"))
        f.case("stack_%s" % dt, "stack", [a, a], stk, dict(axis=-1))
    rng = R.rng_for("join", "views")
    a, b, c = vals(rng, "float32", (4, 3)), vals(rng, "float32", (2, 3)), vals(rng, "float32", (1, 3))
    f.case("concatenate_views_ax0", "concatenate",
           [R.make_in(mx.transpose(vals(rng, "float32", (3, 4))), "t"), R.make_in(b, "s"), R.make_in(c, "b", (3, 3))],
           cat, dict(axis=0))
    f.case("concatenate_views_ax1", "concatenate",
           [R.make_in(mx.transpose(a), "t"), R.make_in(vals(rng, "float32", (3, 2)), "s")], cat, dict(axis=-1))
    f.case("concatenate_promote", "concatenate", [vals(rng, "int32", (2,)), vals(rng, "float16", (3,)),
                                                  vals(rng, "uint8", (1,))], cat, dict(axis=0))
    f.case("concatenate_empty_part", "concatenate", [a, mx.zeros((0, 3))], cat, dict(axis=0))
    f.case("concatenate_3d_mid", "concatenate", [vals(rng, "int64", (2, 1, 3)), vals(rng, "int64", (2, 4, 3))], cat, dict(axis=1))
    f.case("concatenate_err_shape", "concatenate", [a, vals(rng, "float32", (4, 2))], cat, dict(axis=0))
    f.case("concatenate_err_ndim", "concatenate", [a, vals(rng, "float32", (3,))], cat, dict(axis=0))
    f.case("concatenate_err_axis", "concatenate", [a, a], cat, dict(axis=2))
    f.case("concatenate_err_0d", "concatenate", [R.mk(np.array(1.0), "float32")] * 2, cat, dict(axis=0))
    f.case("stack_ax0", "stack", [a, a * 2, a * 3], stk, dict(axis=0))
    f.case("stack_0d", "stack", [R.mk(np.array(1), "int32"), R.mk(np.array(2.5), "float32")], stk, dict(axis=0))
    f.case("stack_views", "stack", [R.make_in(mx.transpose(a), "t"), R.make_in(vals(rng, "float32", (3, 4)), "s")], stk, dict(axis=1))
    f.case("stack_err_shape", "stack", [a, b], stk, dict(axis=0))
    f.case("stack_err_axis", "stack", [a, a], stk, dict(axis=3))

    spl = lambda xs, p: mx.split(xs[0], p["sections"] if "sections" in p else p["indices"], axis=p["axis"])  # noqa: E731
    x = vals(rng, "int32", (6, 4))
    for n, axis in ((3, 0), (2, 1), (1, 0), (6, -2), (4, 0), (0, 0), (3, 2)):
        f.case("split_s%d_ax%d" % (n, axis), "split", [x], spl, dict(sections=n, axis=axis))
    for k, idx in enumerate(([1, 4], [4, 1], [-2, 10], [], [0, 0, 6], [3])):
        f.case("split_i%d" % k, "split", [x], spl, dict(indices=idx, axis=0))
    f.case("split_view", "split", [R.make_in(mx.transpose(vals(rng, "float16", (4, 6))), "t")], spl, dict(sections=2, axis=0))

    rep = lambda xs, p: mx.repeat(xs[0], p["repeats"], axis=ax(p))  # noqa: E731
    for dt in SOME:
        y = vals(R.rng_for("rep", dt), dt, (2, 3))
        f.case("repeat_%s" % dt, "repeat", [y], rep, dict(repeats=2, axis=1))
    for r, axis in ((3, 0), (0, 1), (2, "none"), (-1, 0), (2, 2)):
        f.case("repeat_r%d_ax%s" % (r, axis), "repeat", [R.make_in(mx.transpose(x), "t")], rep, dict(repeats=r, axis=axis))
    f.case("repeat_0d", "repeat", [R.mk(np.array(3), "int32")], rep, dict(repeats=2, axis="none"))

    til = lambda xs, p: mx.tile(xs[0], p["reps"])  # noqa: E731
    for k, reps in enumerate(([2], [2, 3], [2, 1, 2], [0, 1], [1], [-1])):
        f.case("tile_%d" % k, "tile", [R.make_in(vals(rng, "bfloat16", (2, 3)), "s")], til, dict(reps=reps))
    f.case("tile_0d", "tile", [R.mk(np.array(5), "int32")], til, dict(reps=[3]))

    rol = lambda xs, p: (mx.roll(xs[0], p["shifts"], axis=p["axes"]) if "shifts" in p  # noqa: E731
                         else mx.roll(xs[0], p["shift"], axis=ax(p)))
    y = vals(rng, "int16", (3, 5))
    for sh, axis in ((2, "none"), (-7, "none"), (1, 0), (-4, 1), (12, -1), (0, 1), (3, 2)):
        f.case("roll_%d_ax%s" % (sh, axis), "roll", [R.make_in(y, "s")], rol, dict(shift=sh, axis=axis))
    f.case("roll_multi", "roll", [y], rol, dict(shifts=[1, 2], axes=[0, 1]))
    f.case("roll_0d", "roll", [R.mk(np.array(3), "int32")], rol, dict(shift=1, axis="none"))

    tri = lambda xs, p: mx.tri(p["n"], p["m"], p["k"], dtype=R.MXD[p["dtype"]])  # noqa: E731
    for n, m, k, dt in ((3, 3, 0, "float32"), (2, 4, 1, "int32"), (4, 2, -1, "bool"), (3, 5, -3, "float16"), (0, 2, 0, "float32")):
        f.case("tri_%d_%d_%d" % (n, m, k), "tri", [], tri, dict(n=n, m=m, k=k, dtype=dt))
    for op in ("tril", "triu"):
        fn = (lambda g: lambda xs, p: g(xs[0], p["k"]))(getattr(mx, op))
        for dt in SOME:
            f.case("%s_%s" % (op, dt), op, [vals(R.rng_for(op, dt), dt, (4, 5))], fn, dict(k=0))
        z = vals(R.rng_for(op), "float32", (2, 3, 4))
        for k in (-2, 1, 5):
            f.case("%s_k%d" % (op, k), op, [R.make_in(mx.transpose(z), "t")], fn, dict(k=k))
        f.case("%s_err_1d" % op, op, [mx.zeros((3,))], fn, dict(k=0))


def main():
    f = R.RefFile("sort_scan.ref", "sort, argsort, partition, argpartition, topk, scans, "
                  "concatenate, stack, split, repeat, tile, roll, tri, tril, triu")
    f.lines[2] = "# generated by tools/record_mlx_sort_scan.py; do not edit"
    gen_sort(f)
    gen_scan(f)
    gen_join(f)
    size = f.write()
    assert size < 290000, size


if __name__ == "__main__":
    main()
