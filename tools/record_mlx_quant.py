#!/usr/bin/env python3
"""Records MLX's quantization (mx.quantize, mx.dequantize,
mx.quantized_matmul, mx.gather_qmm, mx.gather_mm, on the CPU stream) into
tests/refs/quant.ref, for the quantization issue's tests.

Usage: python3 tools/record_mlx_quant.py   (pip install "mlx[cpu]==0.32.4")

Cases (inputs from numpy Generators seeded by a CRC32 of the case id, so a
rerun with the same versions gives the same bytes):
- quantize_*: affine mode, bits 2, 3, 4, 5, 6, 8 and group sizes 32, 64,
  128 on float32 weights of several kinds (random normal, constant groups,
  one outlier per group, zeros, negative only, positive only, tiny, large);
  float16 and bfloat16 for bits 4 and 8. Outputs: w_q, scales, biases and
  MLX's dequantization of them.
- fp_*: modes mxfp4, nvfp4, mxfp8 (their group sizes and bits): w_q,
  scales, and the dequantization.
- dequantize_*: random packed words, scales and biases (a checkpoint made
  elsewhere) through mx.dequantize.
- qmm_*, gather_qmm_*, gather_mm_*: products, with `transpose` both ways.
- *_err_*: invalid combinations (MLX's error text, for the record).
The file format is tools/record_mlx_refs.py's.
"""
import os
import sys

import numpy as np
import mlx.core as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_mlx_refs as R  # noqa: E402

C = mx.cpu
KINDS = ["normal", "constant", "outlier", "zeros", "negative", "positive", "tiny", "large"]


def weights(kind, shape, group, dtype, rng):
    v = rng.standard_normal(shape)
    if kind == "constant":
        g = rng.standard_normal(shape[:-1] + (shape[-1] // group, 1))
        v = np.broadcast_to(g, shape[:-1] + (shape[-1] // group, group)).reshape(shape)
    elif kind == "outlier":
        v = v * 0.1
        v.reshape(-1, group)[:, rng.integers(0, group)] = 25.0
    elif kind == "zeros":
        v = np.zeros(shape)
    elif kind == "negative":
        v = -np.abs(v) - 0.01
    elif kind == "positive":
        v = np.abs(v) + 0.01
    elif kind == "tiny":
        v = v * 1e-6
    elif kind == "large":
        v = v * 1e4
    return R.mk(v, dtype)


def gen_quantize(f):
    for dtype in ["float32", "float16", "bfloat16"]:
        for bits in [1, 2, 3, 4, 5, 6, 8]:
            if dtype != "float32" and bits not in (4, 8):
                continue
            for group in [32, 64, 128]:
                for kind in KINDS:
                    cid = "quantize_%s_b%d_g%d_%s" % (dtype, bits, group, kind)
                    w = weights(kind, (1, 256), group, dtype, R.rng_for(cid))

                    def fn(v, p, bits=bits, group=group):
                        q, s, b = mx.quantize(v[0], group_size=group, bits=bits, stream=C)
                        d = mx.dequantize(q, s, b, group_size=group, bits=bits, stream=C)
                        return [q, s, b, d]

                    f.case(cid, "quantize", [w], fn, {"bits": bits, "group_size": group, "mode": "affine"})


def gen_fp(f):
    for mode, group, bits in [("mxfp4", 32, 4), ("nvfp4", 16, 4), ("mxfp8", 32, 8)]:
        for dtype in ["float32", "float16", "bfloat16"]:
            for kind in KINDS:
                cid = "fp_%s_%s_%s" % (mode, dtype, kind)
                w = weights(kind, (1, 128), group, dtype, R.rng_for(cid))

                def fn(v, p, mode=mode, group=group, bits=bits):
                    q, s = mx.quantize(v[0], group_size=group, bits=bits, mode=mode, stream=C)
                    d = mx.dequantize(q, s, group_size=group, bits=bits, mode=mode, stream=C)
                    return [q, s, d]

                f.case(cid, "quantize", [w], fn, {"bits": bits, "group_size": group, "mode": mode})


def gen_dequantize(f):
    for bits in [1, 2, 3, 4, 5, 6, 8]:
        for group in [32, 64, 128]:
            for dtype in ["float32", "float16", "bfloat16"]:
                cid = "dequantize_%s_b%d_g%d" % (dtype, bits, group)
                rng = R.rng_for(cid)
                cols = 128
                words = cols * bits // 32
                q = mx.array(rng.integers(0, 2**32, size=(2, words), dtype=np.uint64).astype(np.uint32))
                s = R.mk(rng.uniform(0.01, 0.2, size=(2, cols // group)), dtype)
                b = R.mk(rng.uniform(-1, 1, size=(2, cols // group)), dtype)
                f.case(cid, "dequantize", [q, s, b],
                       lambda v, p, bits=bits, group=group: mx.dequantize(
                           v[0], v[1], v[2], group_size=group, bits=bits, stream=C),
                       {"bits": bits, "group_size": group, "mode": "affine"})


def gen_products(f):
    for bits in [2, 3, 4, 6, 8]:
        for group in [32, 64, 128] if bits == 4 else [64]:
            for transpose in [True, False]:
                for rows in [1, 5]:
                    cid = "qmm_b%d_g%d_%s_m%d" % (bits, group, "t" if transpose else "n", rows)
                    rng = R.rng_for(cid)
                    k = n = 128 if group == 128 else 64
                    wshape = (n, k) if transpose else (k, n)
                    w = R.mk(rng.standard_normal(wshape), "float32")
                    q, s, b = mx.quantize(w, group_size=group, bits=bits, stream=C)
                    x = R.mk(rng.standard_normal((rows, k)), "float32")
                    f.case(cid, "quantized_matmul", [x, q, s, b],
                           lambda v, p, bits=bits, group=group, transpose=transpose: mx.quantized_matmul(
                               v[0], v[1], v[2], v[3], transpose=transpose, group_size=group, bits=bits,
                               stream=C),
                           {"bits": bits, "group_size": group, "transpose": transpose, "mode": "affine"})
    for sorted_ in [False, True]:
        for transpose in [True, False]:
            cid = "gather_qmm_%s_%s" % ("sorted" if sorted_ else "unsorted", "t" if transpose else "n")
            rng = R.rng_for(cid)
            experts, k, n, tokens = 4, 64, 64, 6
            wshape = (experts, n, k) if transpose else (experts, k, n)
            w = R.mk(rng.standard_normal(wshape), "float32")
            q, s, b = mx.quantize(w, group_size=64, bits=4, stream=C)
            x = R.mk(rng.standard_normal((tokens, 1, k)), "float32")
            idx = rng.integers(0, experts, size=(tokens,))
            if sorted_:
                idx = np.sort(idx)
            rhs = mx.array(idx.astype(np.uint32))
            f.case(cid, "gather_qmm", [x, q, s, b, rhs],
                   lambda v, p, transpose=transpose, sorted_=sorted_: mx.gather_qmm(
                       v[0], v[1], v[2], v[3], rhs_indices=v[4], transpose=transpose, group_size=64,
                       bits=4, sorted_indices=sorted_, stream=C),
                   {"bits": 4, "group_size": 64, "transpose": transpose, "sorted_indices": sorted_})
        cid = "gather_mm_%s" % ("sorted" if sorted_ else "unsorted")
        rng = R.rng_for(cid)
        a = R.mk(rng.standard_normal((6, 1, 32)), "float32")
        bm = R.mk(rng.standard_normal((4, 32, 16)), "float32")
        idx = rng.integers(0, 4, size=(6,))
        if sorted_:
            idx = np.sort(idx)
        rhs = mx.array(idx.astype(np.uint32))
        f.case(cid, "gather_mm", [a, bm, rhs],
               lambda v, p, sorted_=sorted_: mx.gather_mm(v[0], v[1], rhs_indices=v[2],
                                                          sorted_indices=sorted_, stream=C),
               {"sorted_indices": sorted_})


def gen_errors(f):
    w = mx.ones((2, 96))
    f.case("quantize_err_group", "quantize", [w],
           lambda v, p: list(mx.quantize(v[0], group_size=64, bits=4, stream=C)), {"bits": 4, "group_size": 64})
    f.case("quantize_err_bits", "quantize", [mx.ones((2, 128))],
           lambda v, p: list(mx.quantize(v[0], group_size=64, bits=7, stream=C)), {"bits": 7, "group_size": 64})
    f.case("quantize_err_mode", "quantize", [mx.ones((2, 128))],
           lambda v, p: list(mx.quantize(v[0], group_size=64, bits=4, mode="int4", stream=C)),
           {"bits": 4, "group_size": 64, "mode": "int4"})
    q, s, b = mx.quantize(mx.ones((2, 128)), group_size=64, bits=4, stream=C)
    f.case("dequantize_err_scales", "dequantize", [q, s[:, :1], b],
           lambda v, p: mx.dequantize(v[0], v[1], v[2], group_size=64, bits=4, stream=C),
           {"bits": 4, "group_size": 64})


def main():
    f = R.RefFile("quant.ref", "mlx quantize / dequantize / quantized_matmul / gather_qmm / gather_mm on the "
                  "CPU stream; outputs of quantize: w_q, scales, biases (affine), then the dequantization")
    f.lines[2] = "# generated by tools/record_mlx_quant.py; do not edit"
    gen_quantize(f)
    gen_fp(f)
    gen_dequantize(f)
    gen_products(f)
    gen_errors(f)
    f.write()


if __name__ == "__main__":
    main()
