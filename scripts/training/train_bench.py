#!/usr/bin/env python3
"""Training benchmarks of the published "AMD MI350X Training Benchmark Results" on one machine, plain PyTorch
(ROCm or CUDA alike), no other dependency.

Parts (--parts, comma-separated; default all but ddp):
  matmul       square matmuls 4096/8192/16384, 20 iterations each (Benchmark 1)
  linear       torch.matmul vs F.linear on the Llama-70B shapes (Benchmark 1b), do_bench style
  fp8          FP8 GEMM with torch._scaled_mm, or a "not available" line with the reason
  mlp          the 3-layer MLP training loop, batch 256 (Benchmark 2)
  transformer  GPT-style training at that report's sizes (Benchmark 3)
  ddp          the transformer under DistributedDataParallel; launch with torchrun (Benchmark 4)

Every timed repetition of a GEMM starts after writing a 256 MiB buffer, as triton's do_bench
does, so that a repetition does not find its operands in L2 left there by the one before.

stdout carries one JSON object per line and nothing else (runara's training.lua reads them);
the first is {"part": "env", ...}. Diagnostics go to stderr. Under torchrun only rank 0 prints.
  python3 train_bench.py --quick
  torchrun --nproc_per_node=8 train_bench.py --parts ddp --sizes 7b
"""
import argparse
import json
import os
import re
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
MATMUL_SIZES = [4096, 8192, 16384]
LINEAR_SHAPES = [  # (M, N, K, description), that report's Benchmark 1b
    (8192, 8192, 8192, "Standard Square (8K)"),
    (16384, 8192, 7168, "FFN GEMM 1"),
    (16384, 16384, 16384, "Large Square (16K)"),
    (16384, 1024, 8192, "Attention Output"),
    (16384, 3584, 8192, "FFN GEMM 2"),
    (4096, 4096, 4096, "Standard Square (4K)"),
    (16384, 8192, 1280, "Fused QKV Projection"),
]
# name: (layers, heads, d_model, d_ff, batch, seq), that report's Benchmark 3 (two tables)
SIZES = {
    "small": (6, 6, 384, 1536, 32, 512),
    "medium": (12, 12, 768, 3072, 16, 512),
    "large": (24, 16, 1024, 4096, 8, 512),
    "xl": (36, 20, 1280, 5120, 4, 512),
    "1.5b": (48, 24, 1536, 6144, 4, 512),
    "3b": (32, 32, 2560, 10240, 2, 512),
    "7b": (32, 32, 4096, 11008, 8, 1024),
    "13b": (40, 40, 5120, 13824, 4, 1024),
}
VOCAB = 50257  # GPT-2's; with tied embeddings it gives that report's parameter counts
OOM = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)
RANK = int(os.environ.get("RANK", "0"))


def emit(obj):
    if RANK == 0:
        print(json.dumps(obj), flush=True)


def log(msg):
    print(f"train_bench[{RANK}]: {msg}", file=sys.stderr, flush=True)


def env_line(world_size):
    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    emit({"part": "env", "gpu": p.name, "gpu_count": torch.cuda.device_count(),
          "memory_total_bytes": p.total_memory, "torch": torch.__version__,
          "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
          "world_size": world_size})


class L2Flush:
    def __init__(self):
        self.buf = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")

    def __call__(self):
        self.buf.zero_()


def time_reps(fn, warmup, reps, flush):
    """Per-repetition device times in ms, each after an L2 flush (triton's do_bench method)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for s, e in zip(starts, ends):
        flush()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def tflops(flop, ms):
    return round(flop / (ms / 1e3) / 1e12, 1)


def bench_matmul(args, flush):
    for name in args.dtypes.split(","):
        for n in args.matmul_sizes:
            a = torch.randn(n, n, device="cuda", dtype=DTYPES[name])
            b = torch.randn(n, n, device="cuda", dtype=DTYPES[name])
            t = time_reps(lambda: torch.matmul(a, b), 3, args.matmul_iters, flush)
            emit({"part": "matmul", "n": n, "dtype": name, "iters": len(t), "total_s": round(sum(t) / 1e3, 4),
                  "median_ms": round(statistics.median(t), 4), "tflops": tflops(2 * n ** 3, statistics.median(t))})
            del a, b


def bench_linear(args, flush):
    for name in args.dtypes.split(","):
        for m, n, k, what in args.linear_shapes:
            x = torch.randn(m, k, device="cuda", dtype=DTYPES[name])
            w = torch.randn(n, k, device="cuda", dtype=DTYPES[name])  # F.linear's layout: x @ w.T
            wt = w.t().contiguous()
            mm = statistics.median(time_reps(lambda: torch.matmul(x, wt), args.warmup, args.reps, flush))
            lin = statistics.median(time_reps(lambda: F.linear(x, w), args.warmup, args.reps, flush))
            emit({"part": "linear", "m": m, "n": n, "k": k, "name": what, "dtype": name,
                  "warmup": args.warmup, "reps": args.reps,
                  "matmul_ms": round(mm, 4), "matmul_tflops": tflops(2 * m * n * k, mm),
                  "linear_ms": round(lin, 4), "linear_tflops": tflops(2 * m * n * k, lin)})
            del x, w, wt


def bench_fp8(args, flush):
    # MI300X computes FP8 as e4m3fnuz, MI350X and NVIDIA as OCP e4m3fn: the first that runs is used.
    kinds = [getattr(torch, n) for n in ("float8_e4m3fn", "float8_e4m3fnuz") if hasattr(torch, n)]
    if not kinds or not hasattr(torch, "_scaled_mm"):
        return emit({"part": "fp8", "status": "not available",
                     "reason": f"torch {torch.__version__} has no float8 dtype or torch._scaled_mm"})
    one = torch.tensor(1.0, device="cuda")
    for m, n, k, what in args.linear_shapes:
        reason = None
        for fp8 in kinds:
            a = torch.randn(m, k, device="cuda").to(fp8)
            b = torch.randn(n, k, device="cuda").to(fp8).t()  # _scaled_mm wants the second operand column-major
            fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            try:
                fn()
                break
            except (RuntimeError, TypeError) as e:  # a GPU without FP8 units, an older signature
                reason = f"{fp8}: " + str(e).splitlines()[0][:300]
        else:
            return emit({"part": "fp8", "status": "not available", "reason": reason})
        ms = statistics.median(time_reps(fn, args.warmup, args.reps, flush))
        emit({"part": "fp8", "status": "ok", "m": m, "n": n, "k": k, "name": what, "dtype": str(fp8).split(".")[-1],
              "median_ms": round(ms, 4), "tflops": tflops(2 * m * n * k, ms)})
        del a, b


def bench_mlp(args):
    batch, steps = 256, args.mlp_steps
    model = nn.Sequential(nn.Linear(4096, 8192), nn.ReLU(), nn.Linear(8192, 8192), nn.ReLU(),
                          nn.Linear(8192, 4096)).cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(batch, 4096, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(batch, 4096, device="cuda", dtype=torch.bfloat16)

    def step():
        opt.zero_grad(set_to_none=True)
        F.mse_loss(model(x), y).backward()
        opt.step()

    for _ in range(args.warmup_steps):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    total = time.perf_counter() - t0
    emit({"part": "mlp", "dtype": "bf16", "batch": batch, "steps": steps, "params": sum(p.numel() for p in model.parameters()),
          "total_s": round(total, 4), "samples_per_s": round(batch * steps / total, 1),
          "ms_per_step": round(total / steps * 1e3, 3)})


class Block(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, layers, heads, d, ff, seq):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, d), nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads, ff) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return F.linear(self.ln(x), self.tok.weight)  # tied output head, as GPT-2


def estimate_bytes(params, layers, d, batch, seq):
    # bf16 weights + grads + two bf16 AdamW states = 8 bytes/param; activations ~34*d bytes per
    # token and layer (Korthikanti et al. 2022, flash attention), plus the logits twice.
    return 8 * params + 34 * d * batch * seq * layers + 2 * 2 * batch * seq * VOCAB


def train_transformer(size, args, world_size, part):
    layers, heads, d, ff, batch, seq = SIZES[size]
    batch = args.batch or batch
    base = {"part": part, "size": size, "dtype": args.train_dtype, "layers": layers, "heads": heads, "d_model": d,
            "d_ff": ff, "batch": batch, "seq": seq, "world_size": world_size, "warmup": args.warmup_steps,
            "steps": args.steps, "memory_total_bytes": torch.cuda.get_device_properties(0).total_memory}
    model = opt = None
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    try:
        model = GPT(layers, heads, d, ff, seq).cuda().to(torch.bfloat16)
        base["params"] = sum(p.numel() for p in model.parameters())
        if args.train_dtype == "fp8":
            try:
                from torchao.float8 import convert_to_float8_training
            except ImportError as e:
                return emit({**base, "status": "not available", "reason": f"FP8 training needs torchao: {e}"})
            convert_to_float8_training(model)
        if world_size > 1 or part == "ddp":
            model = nn.parallel.DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        idx = torch.randint(0, VOCAB, (batch, seq), device="cuda")

        def step():
            opt.zero_grad(set_to_none=True)
            logits = model(idx)
            F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB).float(), idx[:, 1:].reshape(-1)).backward()
            opt.step()

        for _ in range(args.warmup_steps):
            step()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(args.steps):
            step()
        torch.cuda.synchronize()
        total = time.perf_counter() - t0
        ok = torch.tensor([1], device="cuda")
    except OOM as e:
        msg = str(e).splitlines()[0]
        log(f"{size}: out of memory: {msg}")
        tried = re.search(r"Tried to allocate ([\d.]+) (GiB|MiB)", msg)
        params = base.get("params") or approx_params(layers, d, ff, seq)
        base.update({"params": params, "status": "skipped", "reason": "out of memory",
                     "allocated_bytes": torch.cuda.max_memory_allocated(),
                     "tried_bytes": tried and int(float(tried[1]) * (2 ** 30 if tried[2] == "GiB" else 2 ** 20)),
                     "estimated_bytes": estimate_bytes(params, layers, d, batch, seq), "error": msg[:300]})
        model = opt = None
        torch.cuda.empty_cache()
        ok = torch.tensor([0], device="cuda")
    if world_size > 1:  # every rank learns whether any ran out, so none waits in a collective alone
        torch.distributed.all_reduce(ok, op=torch.distributed.ReduceOp.MIN)
    if ok.item() == 0:
        base.setdefault("status", "skipped")
        base.setdefault("reason", "out of memory on another rank")
        return emit(base)
    tokens = world_size * batch * seq * args.steps
    emit({**base, "status": "ok", "total_s": round(total, 4), "tokens_per_s": round(tokens / total, 1),
          "tokens_per_s_per_gpu": round(tokens / total / world_size, 1),
          "ms_per_step": round(total / args.steps * 1e3, 3),
          "peak_memory_bytes": torch.cuda.max_memory_allocated()})
    del model, opt


def approx_params(layers, d, ff, seq):
    return layers * (4 * d * d + 2 * d * ff + 9 * d + ff) + (VOCAB + seq) * d + 2 * d


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--parts", default="matmul,linear,fp8,mlp,transformer")
    p.add_argument("--sizes", default=",".join(SIZES), help="transformer sizes: " + ",".join(SIZES))
    p.add_argument("--dtypes", default="fp16,bf16", help="GEMM dtypes")
    p.add_argument("--train-dtype", default="bf16", choices=["bf16", "fp8"])
    p.add_argument("--warmup", type=int, default=30, help="GEMM warm-up repetitions (do_bench: 30)")
    p.add_argument("--reps", type=int, default=200, help="GEMM timed repetitions, median reported")
    p.add_argument("--warmup-steps", type=int, default=5, help="training steps not timed")
    p.add_argument("--steps", type=int, default=20, help="timed training steps")
    p.add_argument("--batch", type=int, default=0, help="per-GPU batch, overriding the published report's per size")
    p.add_argument("--quick", action="store_true", help="small sizes, few steps: well under 90 s on one H100")
    args = p.parse_args()
    args.matmul_sizes, args.matmul_iters, args.linear_shapes, args.mlp_steps = MATMUL_SIZES, 20, LINEAR_SHAPES, 100
    if args.quick:
        args.matmul_sizes, args.linear_shapes = [4096, 8192], [s for s in LINEAR_SHAPES if s[0] * s[1] * s[2] <= 8192 ** 3]
        args.warmup, args.reps, args.warmup_steps, args.steps, args.mlp_steps = 5, 20, 2, 5, 20
        if args.sizes == p.get_default("sizes"):
            args.sizes = "small,medium"
    sizes = args.sizes.split(",")
    for s in sizes:
        if s not in SIZES:
            raise SystemExit(f"train_bench: unknown size '{s}'; known: {', '.join(SIZES)}")
    if not torch.cuda.is_available():
        raise SystemExit("RuntimeError: no GPU visible to PyTorch (ROCm or CUDA)")
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    parts = args.parts.split(",")
    if "LOCAL_RANK" in os.environ:  # launched by torchrun: the DDP part only
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        torch.distributed.init_process_group(backend="nccl")  # RCCL on ROCm answers to "nccl"
        parts = ["ddp"]
    env_line(world_size)
    flush = L2Flush() if {"matmul", "linear", "fp8"} & set(parts) else None
    for part in parts:
        log(f"part {part}")
        if part == "matmul":
            bench_matmul(args, flush)
        elif part == "linear":
            bench_linear(args, flush)
        elif part == "fp8":
            bench_fp8(args, flush)
        elif part == "mlp":
            bench_mlp(args)
        elif part in ("transformer", "ddp"):
            if part == "ddp" and "LOCAL_RANK" not in os.environ:
                emit({"part": "ddp", "status": "skipped", "reason": "not launched under torchrun"})
                continue
            for s in sizes:
                train_transformer(s, args, world_size, part)
        else:
            raise SystemExit(f"train_bench: unknown part '{part}'; known: matmul, linear, fp8, mlp, transformer, ddp")
        torch.cuda.empty_cache()
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
