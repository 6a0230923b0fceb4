#!/usr/bin/env python3
"""Records mlx.nn's convolution, pooling, upsampling, recurrent and
normalization layers and mlx.nn.init into tests/refs/nn_layers2.ref, for
tests/nn/conv_test.cpp, recurrent_test.cpp and normalization_test.cpp.

Usage: python3 tools/record_mlx_nn_layers2.py   (pip install "mlx[cpu]==0.32.4")

Initial weights: every case seeds MLX's generator, builds the layers in the
listed order and records their parameters in tree_flatten order, so the C++
side, seeding the same way, must draw the same bits. Forward cases record
the inputs (and biases set by hand, since MLX starts them at zero) and the
outputs. The file format is tools/record_mlx_refs.py's (which records the
MLX version in the header).
"""
import os
import sys

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


def conv_layers():
    return [
        nn.Conv1d(3, 4, 3),
        nn.Conv1d(4, 6, 2, stride=2, padding=1, dilation=1, groups=2, bias=False),
        nn.Conv2d(3, 5, (2, 3)),
        nn.Conv2d(4, 4, 3, stride=(2, 1), padding=(1, 0), groups=2),
        nn.Conv3d(2, 3, 2),
        nn.ConvTranspose1d(3, 2, 3),
        nn.ConvTranspose2d(2, 3, (3, 2), bias=False),
        nn.ConvTranspose3d(2, 2, 2),
    ]


def rnn_layers():
    return [
        nn.RNN(3, 4),
        nn.RNN(2, 3, bias=False),
        nn.GRU(3, 4),
        nn.GRU(2, 3, bias=False),
        nn.LSTM(3, 4),
        nn.LSTM(2, 2, bias=False),
    ]


def init_cases(f):
    def conv(v, p):
        mx.random.seed(p["seed"])
        return params_of(*conv_layers())
    f.case("init_conv", "init", [], conv, {"seed": 31})

    def rnn(v, p):
        mx.random.seed(p["seed"])
        return params_of(*rnn_layers())
    f.case("init_recurrent", "init", [], rnn, {"seed": 32})

    def norm(v, p):
        # No draws: the parameters (and BatchNorm's running statistics,
        # frozen parameters in MLX, buffers in nuvec) in MLX's order.
        return params_of(nn.GroupNorm(2, 6), nn.InstanceNorm(5, affine=True), nn.BatchNorm(3),
                         nn.BatchNorm(2, affine=False))
    f.case("init_norm", "init", [], norm)


def forward_conv(f):
    rng = R.rng_for("nn_layers2_conv")

    def rnd(*shape):
        return R.mk(rng.standard_normal(shape), "float32")

    x1, x2, x3 = rnd(2, 9, 4), rnd(2, 6, 7, 4), rnd(1, 5, 4, 6, 2)
    b1, b2, b3 = rnd(6), rnd(4), rnd(3)

    def conv(v, p):
        mx.random.seed(p["seed"])
        c1 = nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2)
        c2 = nn.Conv1d(4, 6, 2, groups=2)
        c3 = nn.Conv2d(4, 4, (3, 2), stride=(1, 2), padding=(1, 1), dilation=(2, 1), groups=2)
        c4 = nn.Conv3d(2, 3, (2, 3, 2), stride=(1, 1, 2), padding=(1, 0, 1))
        c1.bias, c3.bias, c4.bias = v[3], v[4], v[5]
        return [c1(v[0]), c2(v[0]), c3(v[1]), c4(v[2])]
    f.case("forward_conv", "forward", [x1, x2, x3, b1, b2, b3], conv, {"seed": 41})

    t1, t2, t3 = rnd(2, 5, 3), rnd(1, 4, 3, 2), rnd(1, 3, 2, 3, 2)

    def convt(v, p):
        mx.random.seed(p["seed"])
        d1 = nn.ConvTranspose1d(3, 4, 3, stride=2, padding=1, dilation=1, output_padding=1)
        d2 = nn.ConvTranspose2d(2, 3, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2))
        d3 = nn.ConvTranspose3d(2, 2, 2, stride=2, output_padding=(1, 0, 1))
        d1.bias = v[3]
        return [d1(v[0]), d2(v[1]), d3(v[2])]
    f.case("forward_conv_transpose", "forward", [t1, t2, t3, rnd(4)], convt, {"seed": 42})


def forward_pool(f):
    rng = R.rng_for("nn_layers2_pool")

    def rnd(*shape):
        return R.mk(rng.standard_normal(shape), "float32")

    a, b, c = rnd(2, 8, 3), rnd(2, 6, 7, 3), rnd(1, 4, 6, 5, 2)

    def pool(v, p):
        x1, x2, x3 = v
        return [
            nn.MaxPool1d(2)(x1), nn.MaxPool1d(3, stride=2, padding=1)(x1), nn.AvgPool1d(2)(x1),
            nn.AvgPool1d(3, stride=1, padding=1)(x1),
            nn.MaxPool2d(2)(x2), nn.MaxPool2d((2, 3), stride=(1, 2), padding=(1, 1))(x2),
            nn.AvgPool2d(2)(x2), nn.AvgPool2d(3, stride=2, padding=1)(x2),
            nn.MaxPool3d(2)(x3), nn.AvgPool3d((1, 2, 2), stride=1)(x3),
            nn.AvgPool3d(2, stride=2)(x3),
        ]
    f.case("forward_pool", "forward", [a, b, c], pool)

    u1, u2, u3 = rnd(2, 5, 3), rnd(1, 4, 3, 2), rnd(1, 2, 3, 2, 1)

    def up(v, p):
        x1, x2, x3 = v
        out = []
        for m, s, ac, aa in [("nearest", 2, False, False), ("nearest", 1.5, False, False),
                             ("nearest", 0.5, False, False), ("linear", 2, False, False),
                             ("linear", 1.7, True, False), ("cubic", 2, False, False),
                             ("cubic", 2.5, True, False), ("linear", 0.5, False, True),
                             ("cubic", 0.6, False, True), ("linear", 2, False, True)]:
            out.append(nn.Upsample(s, m, ac, aa)(x1))
        for m, s, ac, aa in [("nearest", (2, 3), False, False), ("nearest", (1.5, 0.7), False, False),
                             ("linear", (2, 1.5), False, False), ("linear", 2, True, False),
                             ("cubic", (1.5, 2), False, False), ("cubic", 2, True, False),
                             ("linear", 0.5, False, True), ("cubic", (0.5, 2), False, True)]:
            out.append(nn.Upsample(s, m, ac, aa)(x2))
        out.append(nn.Upsample(2, "nearest")(x3))
        out.append(nn.Upsample((1, 2, 1.5), "linear")(x3))
        out.append(nn.Upsample(2, "linear", align_corners=True)(x3))
        return out
    f.case("forward_upsample", "forward", [u1, u2, u3], up)


def forward_recurrent(f):
    rng = R.rng_for("nn_layers2_rnn")

    def rnd(*shape):
        return R.mk(rng.standard_normal(shape), "float32")

    x, x2d, h0, c0 = rnd(2, 5, 3), rnd(4, 3), rnd(2, 4), rnd(2, 4)

    def rnn(v, p):
        mx.random.seed(p["seed"])
        r1 = nn.RNN(3, 4)
        r2 = nn.RNN(3, 4, bias=False, nonlinearity=nn.relu)
        g1 = nn.GRU(3, 4)
        g2 = nn.GRU(3, 4, bias=False)
        l1 = nn.LSTM(3, 4)
        l2 = nn.LSTM(3, 4, bias=False)
        x, x2d, h0, c0 = v
        out = [r1(x), r1(x, h0), r2(x), r1(x2d), g1(x), g1(x, h0), g2(x), g2(x, h0), g1(x2d)]
        out += list(l1(x)) + list(l1(x, h0, c0)) + list(l1(x, h0)) + list(l2(x, h0, c0)) + list(l1(x2d))
        return out
    f.case("forward_recurrent", "forward", [x, x2d, h0, c0], rnn, {"seed": 51})


def forward_norm(f):
    rng = R.rng_for("nn_layers2_norm")

    def rnd(*shape, scale=1.0, shift=0.0):
        return R.mk(rng.standard_normal(shape) * scale + shift, "float32")

    x, xi, w, b = rnd(2, 4, 6, scale=2, shift=0.5), rnd(2, 3, 4, 6), rnd(6), rnd(6)

    def norm(v, p):
        x, xi, w, b = v
        g1 = nn.GroupNorm(2, 6)
        g1.weight, g1.bias = w, b
        g2 = nn.GroupNorm(3, 6, eps=1e-3, pytorch_compatible=True)
        g2.weight, g2.bias = w, b
        g3 = nn.GroupNorm(2, 6, affine=False, pytorch_compatible=True)
        i1 = nn.InstanceNorm(6, affine=True)
        i1.weight, i1.bias = w, b
        i2 = nn.InstanceNorm(6, eps=1e-2)
        return [g1(x), g2(x), g3(xi), i1(xi), i2(x)]
    f.case("forward_norm", "forward", [x, xi, w, b], norm)

    y1, y2, y3 = rnd(8, 4, scale=3, shift=1), rnd(8, 4, scale=0.5, shift=-2), rnd(3, 4)
    z1, z2, z3 = rnd(2, 3, 3, 4, scale=2), rnd(2, 3, 3, 4, shift=1), rnd(1, 2, 2, 4)
    s1 = rnd(3, 5, 4)

    def batch(v, p):
        y1, y2, y3, z1, z2, z3, s1, w4, b4 = v
        out = []
        bn = nn.BatchNorm(4)
        bn.weight, bn.bias = w4, b4
        out += [bn(y1), bn(y2), bn.running_mean, bn.running_var]
        bn.eval()
        out += [bn(y3)]
        bn2 = nn.BatchNorm(4, eps=1e-3, momentum=0.3, affine=False)
        out += [bn2(z1), bn2(z2), bn2.running_mean, bn2.running_var]
        bn2.eval()
        out += [bn2(z3)]
        bn3 = nn.BatchNorm(4, track_running_stats=False)
        out += [bn3(s1)]
        bn3.eval()
        out += [bn3(s1)]
        return out
    f.case("forward_batchnorm", "forward", [y1, y2, y3, z1, z2, z3, s1, rnd(4), rnd(4)], batch)


def init_fn_cases(f):
    init = nn.init
    z = mx.zeros

    def fns(v, p):
        out = []
        mx.random.seed(61)
        out += [init.constant(0.5)(z((2, 3))), init.constant(-2.0, mx.float16)(z((3,)))]
        out += [init.normal()(z((3, 4))), init.normal(0.5, 2.0)(z((2, 5))),
                init.normal(dtype=mx.float16)(z((4,)))]
        out += [init.uniform()(z((3, 4))), init.uniform(-1.0, 2.0)(z((2, 5))),
                init.uniform(dtype=mx.bfloat16)(z((4,)))]
        out += [init.identity()(z((3, 3))), init.identity(mx.float16)(z((2, 2)))]
        mx.random.seed(62)
        out += [init.glorot_normal()(z((4, 3))), init.glorot_normal()(z((4, 2, 3)), gain=2.0),
                init.glorot_uniform()(z((4, 3))), init.glorot_uniform()(z((3, 2, 2, 5)), gain=0.5)]
        mx.random.seed(63)
        out += [init.he_normal()(z((4, 3))), init.he_normal()(z((4, 2, 3)), mode="fan_out", gain=2.0),
                init.he_uniform()(z((4, 3))), init.he_uniform()(z((5, 2, 3)), mode="fan_out")]
        mx.random.seed(64)
        out += [init.sparse(0.5)(z((4, 6))), init.sparse(0.3, 1.0, 0.1)(z((3, 5))),
                init.sparse(0.0)(z((2, 3)))]
        return out
    f.case("init_functions", "init", [], fns)

    def ortho(v, p):
        mx.random.seed(65)
        return [init.orthogonal()(z((3, 5))), init.orthogonal(2.0)(z((4, 2))), init.orthogonal()(z((3, 3)))]
    f.case("init_orthogonal", "init", [], ortho)


def main():
    f = R.RefFile("nn_layers2.ref", "mlx.nn conv, pooling, upsample, recurrent, normalization layers "
                  "and mlx.nn.init: parameters after mx.random.seed, forward outputs")
    f.lines[2] = "# generated by tools/record_mlx_nn_layers2.py; do not edit"
    init_cases(f)
    forward_conv(f)
    forward_pool(f)
    forward_recurrent(f)
    forward_norm(f)
    init_fn_cases(f)
    f.write()


if __name__ == "__main__":
    main()
