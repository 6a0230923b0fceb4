#!/usr/bin/env python3
"""Records MLX's results of x[...] for many index expressions into
tests/refs/indexing.ref (replayed by tests/indexing_test.cpp).

Each case: `param expr <expression>` in a small grammar that the C++ test
parses: entries separated by commas; an integer; a slice a:b:c with any part
empty; None; ...; or a nested list of integers ([0,2] or [[0],[1]]). The
input is stored as usual (views c/t).
"""
import json
import os
import sys

import mlx.core as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_mlx_refs as R  # noqa: E402

EXPRS_3D = [  # for shape (3, 4, 5)
    "0", "-1", "2,1", "1,-2,3", ":", "::2", "::-1", "1:3", "-2:", ":-1", "3:1:-1",
    "...", "...,0", "0,...", "...,::-2", "None", "None,0", "...,None", "1,None,::2",
    ":,None,1:3,None", "0:0", "5:9", "-100:100", "1,2,3", "::-2,::3,-1",
    "[0,2]", "[-1,0]", "[[0],[2]]", ":,[1,3]", ":,:,[4,0,1]", "[0,1],[1,2]",
    "[0,2],:,[1,3]", "[[0],[1]],[0,2]", "1,[0,3],[1,4]", ":,[0,3],[1,4]",
    "[1,2],1", "[1],:,0", "0,:,[2,2,2]", "[0,0,1],::2", "None,[0,1]",
    "[0,1],None,[1,2]", "...,[1,3]", "[2],...", ":,[[0,1],[2,3]]",
    "[[[0]]]", "-1,[0],[-1]",
]
EXPRS_1D = ["3", "-7", "1:6:2", "::-3", "[0,6,2]", "[[1,2],[3,4]]", "None,...", "...,None"]
ERRORS = ["3", "0,0,0,0", "...,...", "-4", "1,5", "[0.5]"]


def split_top(expr):
    parts, depth, cur = [], 0, ""
    for ch in expr:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += (ch == "[") - (ch == "]")
        cur += ch
    parts.append(cur)
    return parts


def mx_index(expr):
    """The Python index tuple of an expression of the grammar."""
    out = []
    for p in split_top(expr):
        if p == "None":
            out.append(None)
        elif p == "...":
            out.append(Ellipsis)
        elif p.startswith("["):
            out.append(json.loads(p))
        elif ":" in p:
            out.append(slice(*[int(v) if v else None for v in p.split(":")]))
        else:
            out.append(int(p))
    return tuple(out)


def to_index(v):
    if isinstance(v, list):
        return mx.array(v)
    return v


def apply(x, expr):
    idx = tuple(to_index(v) for v in mx_index(expr))
    return x[idx]


def main():
    mx.set_default_device(mx.cpu)
    f = R.RefFile("indexing.ref", "x[...] with the expression in param expr")
    x3 = mx.arange(60, dtype=mx.int32).reshape(3, 4, 5)
    x1 = mx.arange(7, dtype=mx.float32) * 1.5
    n = 0
    for dtype_name, x in [("int32", x3), ("float16", x3.astype(mx.float16))]:
        for expr in EXPRS_3D:
            for view in ("c", "t"):
                inp = R.make_in(x, view)
                f.case("index_%s_%d_%s" % (dtype_name, n, view), "index", [inp],
                       lambda v, p, e=expr: apply(v[0], e), {"expr": expr.replace(" ", "")})
            n += 1
    for expr in EXPRS_1D:
        f.case("index_1d_%d" % n, "index", [x1], lambda v, p, e=expr: apply(v[0], e),
               {"expr": expr})
        n += 1
    for expr in ERRORS:  # out of range, too many indices, two ellipses, float arrays
        x = mx.arange(12, dtype=mx.int32).reshape(3, 4)
        f.case("index_err_%d" % n, "index", [x], lambda v, p, e=expr: apply(v[0], e),
               {"expr": expr})
        n += 1
    # Functional updates: x.at[expr].<op>(update), update as an `in` array.
    at_exprs = ["0", "[0,0,2]", "1:,::2", "[1,1],:,[0,4]", "...,[3,3,3]", "-1,[0,2]",
                "None,0", "[[0],[2]],[1,1]"]
    xf = mx.arange(60, dtype=mx.float32).reshape(3, 4, 5) * 0.5
    for dtype_name, x in [("int32", x3), ("float32", xf)]:
        for expr in at_exprs:
            sel_shape = apply(x, expr).shape
            upd = (mx.arange(max(1, int(mx.array(sel_shape).prod().item()) if sel_shape else 1))
                   .astype(x.dtype) + 2)
            upd = upd[: (int(mx.array(sel_shape).prod().item()) if sel_shape else 1)].reshape(sel_shape)
            for op in ["add", "subtract", "multiply", "divide", "maximum", "minimum"]:
                def fn(v, p, e=expr, o=op):
                    idx = tuple(to_index(t) for t in mx_index(e))
                    return getattr(v[0].at[idx], o)(v[1])
                f.case("at_%s_%s_%d" % (op, dtype_name, n), "at", [x, upd], fn,
                       {"expr": expr, "update": op})
            n += 1
    for axis, idx in [(0, [[1, 0, 2, 2, 0]]), (1, [[0], [3], [3]]), (-1, [[[4, 0]], [[1, 1]], [[2, 3]]])]:
        ia = mx.array(idx)
        vals = mx.arange(ia.size, dtype=mx.int32).reshape(ia.shape) + 100
        x2 = x3[:, :, 0] if axis != -1 else x3
        f.case("put_along_axis_%d" % n, "put_along_axis", [x2, ia, vals],
               lambda v, p, a=axis: mx.put_along_axis(v[0], v[1], v[2], axis=a), {"axis": axis})
        n += 1
    f.write()


if __name__ == "__main__":
    main()
