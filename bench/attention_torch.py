#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention on this GPU, for comparison with rooftune's attention
family: for each shape (rooftune's syntax, BxHQ[:HKV]xSQ[:SKV]xD[:causal], bf16) the median of
20 timed runs after warm-up, in ms and TFLOP/s with the (query, key) pairs counted exactly under
the bottom-right causal mask, as rooftune counts them.  Prints one line per shape; measured on
the GPU it runs on, nothing else."""
import sys

import torch
import torch.nn.functional as F


def parse(shape):
    parts = shape.split(":")
    causal = "causal" in parts
    core = shape.replace(":causal", "")
    b, h, s, d = core.split("x")
    hq, hkv = (int(x) for x in h.split(":")) if ":" in h else (int(h), int(h))
    sq, skv = (int(x) for x in s.split(":")) if ":" in s else (int(s), int(s))
    return int(b), hq, hkv, sq, skv, int(d), causal


def pairs(sq, skv, causal):
    if not causal:
        return sq * skv
    return sum(max(0, min(skv, i + skv - sq + 1)) for i in range(sq))


def main():
    dev = torch.device("cuda")
    name = torch.cuda.get_device_name(dev)
    for shape in sys.argv[1:]:
        b, hq, hkv, sq, skv, d, causal = parse(shape)
        q = torch.randn(b, hq, sq, d, device=dev, dtype=torch.bfloat16)
        k = torch.randn(b, hkv, skv, d, device=dev, dtype=torch.bfloat16)
        v = torch.randn(b, hkv, skv, d, device=dev, dtype=torch.bfloat16)
        if causal and sq != skv:  # bottom-right alignment, as rooftune and FlashAttention do it
            i = torch.arange(sq, device=dev)[:, None]
            j = torch.arange(skv, device=dev)[None, :]
            mask = j <= i + (skv - sq)
            call = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=hq != hkv)
        else:
            call = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hq != hkv)
        for _ in range(3):
            call()
        torch.cuda.synchronize()
        times = []
        for _ in range(20):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            call()
            e.record()
            torch.cuda.synchronize()
            times.append(s.elapsed_time(e))
        times.sort()
        ms = times[len(times) // 2]
        flops = 4.0 * b * hq * d * pairs(sq, skv, causal)
        print(f"torch sdpa {shape:28s} {ms:8.4f} ms {flops / ms / 1e9:7.1f} TFLOP/s (measured on {name})")


if __name__ == "__main__":
    main()
