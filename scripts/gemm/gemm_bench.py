#!/usr/bin/env python3
"""GEMM throughput on one GPU, the method of the published "AMD MI350X Training Benchmark Results" (SemiAnalysis-style): for each Llama-70B
training shape and dtype, warm up, time `reps` matmuls one by one with device events, take the
median, report TFLOPS = 2*M*N*K / median. Runs under PyTorch with ROCm or CUDA alike.

Prints one JSON object per (shape, dtype) on stdout, then nothing else: runara's gemm.lua reads
those lines. Usage: python3 gemm_bench.py [--warmup 30] [--reps 200] [--dtypes fp16,bf16]
"""
import argparse
import json
import statistics

import torch

SHAPES = [  # (M, N, K, description), its "Benchmark 1b"
    (8192, 8192, 8192, "Standard Square (8K)"),
    (16384, 8192, 7168, "FFN GEMM 1"),
    (16384, 16384, 16384, "Large Square (16K)"),
    (16384, 1024, 8192, "Attention Output"),
    (16384, 3584, 8192, "FFN GEMM 2"),
    (4096, 4096, 4096, "Standard Square (4K)"),
    (16384, 8192, 1280, "Fused QKV Projection"),
]
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def time_matmul(a, b, warmup, reps):
    for _ in range(warmup):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))  # milliseconds
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--dtypes", default="fp16,bf16")
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("RuntimeError: no GPU visible to PyTorch (ROCm or CUDA)")
    for name in args.dtypes.split(","):
        dtype = DTYPES[name]
        for m, n, k, what in SHAPES:
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(k, n, device="cuda", dtype=dtype)
            ms = time_matmul(a, b, args.warmup, args.reps)
            print(json.dumps({"m": m, "n": n, "k": k, "name": what, "dtype": name, "warmup": args.warmup,
                              "reps": args.reps, "median_ms": round(ms, 4),
                              "tflops": round(2 * m * n * k / (ms / 1e3) / 1e12, 1)}), flush=True)
            del a, b
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
