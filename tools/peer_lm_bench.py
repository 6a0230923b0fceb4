#!/usr/bin/env python3
"""The peer of `nuvec-lm bench` on the GPU: transformers' Llama with a static
KV cache, which transformers' generate compiles (torch.compile with CUDA graphs), batch-1
greedy decode after a prompt; prints prompt length, time to first token,
decode tokens/s and peak memory as one table. Usage:
python3 tools/peer_lm_bench.py --model DIR [--prompts 128,2048] [--decode 128]"""
import argparse
import time

import torch
import transformers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompts", default="128,2048")
    ap.add_argument("--decode", type=int, default=128)
    a = ap.parse_args()
    model = transformers.AutoModelForCausalLM.from_pretrained(a.model, torch_dtype=torch.bfloat16).cuda().eval()
    # A static cache makes transformers compile the decode step itself
    # (generation_config.compile_config: torch.compile, CUDA graphs).
    model.generation_config.cache_implementation = "static"
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"{sum(p.numel() for p in model.parameters()) / 1e9:.2f} B parameters")
    print("| prompt | time to first token (s) | decode tok/s | peak memory (GB) |\n|---:|---:|---:|---:|")
    for L in [int(x) for x in a.prompts.split(",")]:
        ids = torch.randint(0, model.config.vocab_size, (1, L), device="cuda")
        kw = dict(do_sample=False, min_new_tokens=a.decode, max_new_tokens=a.decode, pad_token_id=0)
        for _ in range(2):  # compile and capture first
            model.generate(ids, **kw)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        model.generate(ids, do_sample=False, max_new_tokens=1, min_new_tokens=1, pad_token_id=0)
        torch.cuda.synchronize()
        ttft = time.perf_counter() - t0
        t0 = time.perf_counter()
        model.generate(ids, **kw)
        torch.cuda.synchronize()
        total = time.perf_counter() - t0
        dec = (a.decode - 1) / max(total - ttft, 1e-9)
        print(f"| {L} | {ttft:.4f} | {dec:.1f} | {torch.cuda.max_memory_allocated() / 1e9:.2f} |", flush=True)


if __name__ == "__main__":
    main()
