#!/usr/bin/env python3
"""Records mlx.nn layers' initial weights (after mx.random.seed) and
forward values into tests/refs/nn_layers.ref, for tests/nn/layers_test.cpp.

Usage: python3 tools/record_mlx_nn.py   (pip install "mlx[cpu]==0.32.4")

Every case seeds MLX's generator, builds the layers in the listed order and
records their parameters in tree_flatten order (then forward outputs), so
the C++ side, seeding the same way, must draw the same bits. The file
format is tools/record_mlx_refs.py's.
"""
import os
import sys

import numpy as np
import mlx.core as mx
import mlx.nn as nn
from mlx.utils import tree_flatten

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_mlx_refs as R  # noqa: E402


def params_of(*layers):
    out = []
    for layer in layers:
        out += [v for _, v in tree_flatten(layer.parameters())]
    return out


def init_cases(f):
    def lin(v, p):
        mx.random.seed(p["seed"])
        a = nn.Linear(5, 3)
        b = nn.Linear(4, 2, bias=False)
        c = nn.Linear(1, 7)
        return params_of(a, b, c)
    f.case("init_linear", "init", [], lin, {"seed": 11})

    def emb(v, p):
        mx.random.seed(p["seed"])
        return params_of(nn.Embedding(10, 6), nn.Embedding(3, 1))
    f.case("init_embedding", "init", [], emb, {"seed": 12})

    def bil(v, p):
        mx.random.seed(p["seed"])
        return params_of(nn.Bilinear(3, 4, 2), nn.Bilinear(2, 2, 3, bias=False))
    f.case("init_bilinear", "init", [], bil, {"seed": 13})


def forward_cases(f):
    rng = R.rng_for("nn_forward")
    x = R.mk(rng.standard_normal((2, 3, 5)), "float32")

    def lin(v, p):
        mx.random.seed(p["seed"])
        a = nn.Linear(5, 3)
        b = nn.Linear(5, 4, bias=False)
        return [a(v[0]), b(v[0])]
    f.case("forward_linear", "forward", [x], lin, {"seed": 21})

    x1 = R.mk(rng.standard_normal((4, 3)), "float32")
    x2 = R.mk(rng.standard_normal((4, 5)), "float32")

    def bil(v, p):
        mx.random.seed(p["seed"])
        return [nn.Bilinear(3, 5, 2)(v[0], v[1])]
    f.case("forward_bilinear", "forward", [x1, x2], bil, {"seed": 22})

    idx = mx.array(np.array([[1, 0, 9], [3, 3, 7]], dtype=np.int32))

    def emb(v, p):
        mx.random.seed(p["seed"])
        e = nn.Embedding(10, 5)
        return [e(v[0]), e.as_linear(v[1])]
    h = R.mk(rng.standard_normal((2, 5)), "float32")
    f.case("forward_embedding", "forward", [idx, h], emb, {"seed": 23})

    xn = R.mk(rng.standard_normal((3, 6)) * 2 + 0.5, "float32")
    w = R.mk(rng.standard_normal((6,)), "float32")
    b = R.mk(rng.standard_normal((6,)), "float32")

    def norms(v, p):
        ln = nn.LayerNorm(6)
        ln.weight, ln.bias = v[1], v[2]
        ln2 = nn.LayerNorm(6, eps=1e-3, affine=False)
        ln3 = nn.LayerNorm(6, bias=False)
        ln3.weight = v[1]
        rms = nn.RMSNorm(6, eps=1e-6)
        rms.weight = v[1]
        return [ln(v[0]), ln2(v[0]), ln3(v[0]), rms(v[0])]
    f.case("forward_norms", "forward", [xn, w, b], norms)

    def drop(v, p):
        mx.random.seed(p["seed"])
        d = nn.Dropout(0.25)
        d2 = nn.Dropout2d(0.5)
        d3 = nn.Dropout3d(0.5)
        out = [d(v[0]), d2(mx.ones((2, 3, 3, 4))), d3(mx.ones((2, 2, 3, 3, 4)))]
        d.eval()
        out.append(d(v[0]))
        return out
    f.case("forward_dropout", "forward", [mx.ones((4, 8))], drop, {"seed": 24})


def transformer_cases(f):
    rng = R.rng_for("nn_transformer")
    x = R.mk(rng.standard_normal((2, 5, 8)), "float32")
    mem = R.mk(rng.standard_normal((2, 3, 8)), "float32")

    def mha(v, p):
        mx.random.seed(p["seed"])
        m = nn.MultiHeadAttention(8, 2)
        m2 = nn.MultiHeadAttention(8, 4, query_input_dims=6, key_input_dims=5, value_dims=12,
                                   value_output_dims=3, bias=True)
        mask = nn.MultiHeadAttention.create_additive_causal_mask(5)
        return params_of(m, m2) + [mask, m(v[0], v[0], v[0]), m(v[0], v[0], v[0], mask)]
    f.case("mha", "forward", [x], mha, {"seed": 31})

    def enc(v, p):
        mx.random.seed(p["seed"])
        e = nn.TransformerEncoder(2, 8, 2, mlp_dims=16)
        t = nn.Transformer(8, 2, 1, 1, 16, norm_first=False)
        mask = nn.MultiHeadAttention.create_additive_causal_mask(5)
        return params_of(e, t) + [e(v[0], mask), t(v[1], v[0], None, mask, None)]
    f.case("transformer", "forward", [x, mem], enc, {"seed": 32})


def positional_cases(f):
    rng = R.rng_for("nn_positional")
    pos = R.mk(rng.uniform(0, 50, (3, 4)), "float32")
    x = R.mk(rng.standard_normal((1, 2, 3, 8)), "float32")
    scores = R.mk(rng.standard_normal((1, 6, 4, 4)), "float32")

    def sinus(v, p):
        a = nn.SinusoidalPositionalEncoding(8)
        b = nn.SinusoidalPositionalEncoding(6, min_freq=0.01, max_freq=2, scale=1.0, cos_first=True,
                                            full_turns=True)
        return [a(v[0]), b(v[0])]
    f.case("sinusoidal", "forward", [pos], sinus)

    def rope(v, p):
        return [nn.RoPE(4)(v[0], offset=2), nn.RoPE(8, traditional=True, base=100, scale=0.5)(v[0])]
    f.case("rope", "forward", [x], rope)

    def alibi(v, p):
        return [nn.ALiBi.create_alibi_slope(6), nn.ALiBi()(v[0]), nn.ALiBi()(v[0][:, :4], offset=1)]
    f.case("alibi", "forward", [scores], alibi)


def quantized_cases(f):
    rng = R.rng_for("nn_quantized")
    x = R.mk(rng.standard_normal((3, 64)), "float32")
    idx = mx.array(np.array([[0, 3], [9, 9]], dtype=np.int32))

    def ql(v, p):
        mx.random.seed(p["seed"])
        a = nn.QuantizedLinear(64, 8)
        b = nn.QuantizedLinear(64, 4, bias=False, group_size=32, bits=8)
        return params_of(a, b) + [a(v[0]), b(v[0]), mx.random.uniform(shape=(2,))]
    f.case("quantized_linear", "forward", [x], ql, {"seed": 41})

    def qmodel(v, p):
        mx.random.seed(p["seed"])
        m = nn.Sequential(nn.Embedding(10, 64), nn.Linear(64, 16))
        nn.quantize(m, group_size=32, bits=4)
        trainable = [k for k, _ in tree_flatten(m.trainable_parameters())]
        assert trainable == ["layers.1.bias"], trainable
        return params_of(m) + [m.layers[0](v[1]), m.layers[0].as_linear(v[0]), m.layers[1](v[0]),
                               mx.random.uniform(shape=(2,))]
    f.case("quantize_model", "forward", [x, idx], qmodel, {"seed": 42})


def main():
    f = R.RefFile("nn_layers.ref", "mlx.nn layers: parameters after mx.random.seed (tree_flatten order), "
                  "then forward outputs")
    f.lines[2] = "# generated by tools/record_mlx_nn.py; do not edit"
    init_cases(f)
    forward_cases(f)
    transformer_cases(f)
    positional_cases(f)
    quantized_cases(f)
    f.write()


if __name__ == "__main__":
    main()
