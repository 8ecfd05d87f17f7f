-- Reference numbers the reports compare a run against, each with where it comes from. Figures
-- quoted from the documents Runara was created from keep their source (shared/seeds/README.md).
return {
  llama70b_fp8 = {
    label = "H100 (FP8)",
    source = "Runara plan (seed 000) §5.2 comparison template: estimates for Llama-3.3-70B FP8 on one NVIDIA H100",
    throughput_tps = 47,       -- single user, tokens/s
    ttft_ms = 120,             -- first token, short prompt
    concurrent_32_tps = 480,   -- 32 concurrent requests, tokens/s
    vram_gb = 75,
    power_w = 700,
  },
  gemm = {
    label = "SemiAnalysis",
    source = "seed 001 (MI350X training benchmarks), quoting SemiAnalysis: BF16 GEMM TFLOPS",
    bf16_tflops = { mi300x = 620, h100 = 720, h200 = 720 },
  },
}
