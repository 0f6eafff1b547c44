"""Tune a GEMM shape with the rooftune command, then call the tuned kernel from PyTorch.

    python python/examples/tune_and_call.py [--shape 4096x4096x4096] [--dtype bf16] [--db tuned.db]

On a GPU machine this measures the candidates (`rooftune tune --device cuda`), then runs
rooftune.gemm on random PyTorch tensors of that shape and compares with torch.matmul.  Without a
GPU it tunes on the model device and prints what librooftune would serve.  The rooftune command
is $ROOFTUNE_BIN, else `rooftune` on PATH; librooftune is found as the package says.
"""
import argparse
import os
import shutil
import subprocess
import sys

import rooftune


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default="4096x4096x4096")
    ap.add_argument("--dtype", default="bf16", choices=["f32", "f16", "bf16"])
    ap.add_argument("--db", default="tuned.db")
    ap.add_argument("--budget", default="16")
    args = ap.parse_args()
    exe = os.environ.get("ROOFTUNE_BIN") or shutil.which("rooftune")
    if not exe:
        sys.exit("tune_and_call: no rooftune command: set ROOFTUNE_BIN or put rooftune on PATH")
    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        torch, gpu = None, False
    device = "cuda" if gpu else "model:h200"
    print("tuning gemm %s %s on %s ..." % (args.shape, args.dtype, device))
    subprocess.run([exe, "tune", "gemm", "--shape", args.shape, "--dtype", args.dtype, "--device", device,
                    "--budget", args.budget, "--db", args.db], check=True)
    db = rooftune.Database(args.db)
    m = db.lookup("gemm", args.shape, args.dtype, device=torch.cuda.get_device_name() if gpu else None,
                  runnable=True)
    print("librooftune serves:", m)
    for line in m.passed_over:
        print("  passed over:", line)
    if not gpu:
        print("no GPU here (or no PyTorch): that is what rooftune.gemm would run")
        return
    M, N, K = (int(x) for x in args.shape.split(":")[0].split("x"))
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    a = torch.randn(M, K, device="cuda", dtype=dt)
    b = torch.randn(K, N, device="cuda", dtype=dt)
    c, info = rooftune.gemm(a, b, db=db, return_info=True)
    ref = a.float() @ b.float()
    err = ((c - ref).norm() / ref.norm()).item()
    print("ran %s %s (%s rule%s): relative error against torch.matmul %.2g" % (
        info.template, info.config, info.path, ", " + info.reason if info.reason else "", err))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for f, name in ((lambda: rooftune.gemm(a, b, out=c, db=db), "rooftune.gemm"), (lambda: a @ b, "torch.matmul")):
        f()
        start.record()
        for _ in range(20):
            f()
        end.record()
        torch.cuda.synchronize()
        print("%-14s %.4f ms (measured, mean of 20, %s)" % (name, start.elapsed_time(end) / 20, torch.cuda.get_device_name()))


if __name__ == "__main__":
    main()
