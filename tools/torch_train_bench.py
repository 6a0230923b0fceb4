#!/usr/bin/env python3
"""PyTorch's side of bench/nn_train_bench.cpp: the same GPT (pre-LayerNorm
without biases, RoPE, causal attention, GELU MLP 4x, tied embeddings,
AdamW lr 1e-3 betas (0.9, 0.99) weight decay 0.1) and MLP training steps,
under torch.compile, printing the same RESULT lines (tokens or samples per
second, the first step's seconds, peak memory in MiB).

Usage: python3 tools/torch_train_bench.py cpu|gpu   (tools/bench_train.sh)
"""
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)

    @staticmethod
    def rope(x):
        b, h, t, hd = x.shape
        half = hd // 2
        inv = 10000.0 ** (-torch.arange(half, device=x.device, dtype=torch.float32) / half)
        ang = torch.arange(t, device=x.device, dtype=torch.float32)[:, None] * inv[None]
        c, s = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1)

    def forward(self, x):
        b, t, d = x.shape
        split = lambda y: y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = self.rope(split(self.q(x))), self.rope(split(self.k(x))), split(self.v(x))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(o.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.n1 = nn.LayerNorm(d, bias=False)
        self.n2 = nn.LayerNorm(d, bias=False)
        self.attn = Attention(d, heads)
        self.up = nn.Linear(d, 4 * d, bias=False)
        self.down = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        return x + self.down(F.gelu(self.up(self.n2(x))))


class Gpt(nn.Module):
    def __init__(self, vocab, d, heads, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(d, bias=False)

    def forward(self, tokens):
        h = self.emb(tokens)
        for b in self.blocks:
            h = b(h)
        return self.norm(h) @ self.emb.weight.T


def peak_mib(gpu):
    if gpu:
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(name, model, opt, x, y, loss_fn, steps, gpu, units):
    dev = "cuda" if gpu else "cpu"

    def step():
        with torch.autocast(dev, dtype=torch.bfloat16, enabled=gpu):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    step_c = torch.compile(step)
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    t0 = time.perf_counter()
    step_c().item()
    first = time.perf_counter() - t0
    for _ in range(3):
        step_c()
    sync()
    t1 = time.perf_counter()
    for _ in range(steps):
        step_c().item()
    per = (time.perf_counter() - t1) / steps
    print("RESULT %s %.0f %.3f %.0f" % (name, units / per, first, peak_mib(gpu)), flush=True)


def main():
    gpu = len(sys.argv) > 1 and sys.argv[1] == "gpu"
    dev = "cuda" if gpu else "cpu"
    torch.manual_seed(0)
    if gpu:
        vocab, d, heads, layers, t, b, steps, name = 96, 384, 6, 6, 256, 64, 20, "gpt_6x384_seq256_b64_bf16"
    else:
        vocab, d, heads, layers, t, b, steps, name = 96, 128, 4, 2, 128, 32, 10, "gpt_2x128_seq128_b32_f32"
    m = Gpt(vocab, d, heads, layers).to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
    x = torch.randint(0, vocab, (b, t), device=dev)
    y = torch.randint(0, vocab, (b, t), device=dev)
    ce = lambda logits, tgt: F.cross_entropy(logits.float().view(-1, vocab), tgt.view(-1))
    run(name, m, opt, x, y, ce, steps, gpu, b * t)
    if gpu:
        torch.cuda.reset_peak_memory_stats()
    mlp = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).to(dev)
    sgd = torch.optim.SGD(mlp.parameters(), lr=0.1, momentum=0.9)
    xm = torch.randn(256, 784, device=dev)
    ym = torch.randint(0, 10, (256,), device=dev)
    # The MLP runs in float32 on both devices (as nuvec's).
    run("mlp_784_512_512_10_b256", mlp, sgd, xm, ym, F.cross_entropy, 50 if gpu else 20, False if not gpu else gpu, 256)


if __name__ == "__main__":
    main()
