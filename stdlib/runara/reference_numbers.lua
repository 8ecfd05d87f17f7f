-- Reference numbers the reports compare a run against, each with where it comes from, named the
-- way a reader can look it up (shared/seeds/README.md lists the documents Runara started from).
-- A reference applies only to its own model and quantization: report.new{ reference = KEY } shows
-- it only when the report's metadata names that model (or none), see docs/report.md.
return {
  llama70b_fp8 = {
    label = "H100 FP8 (estimate)",
    source = "estimates for Llama-3.3-70B-Instruct FP8 on one NVIDIA H100, written in the Runara project's plan "
          .. "(its comparison template); no published measurement stands behind them: check against a measured H100 "
          .. "(scripts/compare_mi300x_h100.lua)",
    model = "meta-llama/Llama-3.3-70B-Instruct",
    quantization = "FP8",
    throughput_tps = 47,       -- single user, tokens/s
    ttft_ms = 120,             -- first token, short prompt
    concurrent_32_tps = 480,   -- 32 concurrent requests, tokens/s
    vram_gb = 75,
    power_w = 700,
  },
  gemm = {
    label = "SemiAnalysis",
    source = "SemiAnalysis, \"MI300X vs H100 vs H200 Benchmark Part 1: Training\" (December 2024), BF16 GEMM TFLOPS, "
          .. "https://newsletter.semianalysis.com/p/mi300x-vs-h100-vs-h200-benchmark-part-1-training",
    bf16_tflops = { mi300x = 620, h100 = 720, h200 = 720 },
  },
  mlperf_llama2_70b_v41 = {
    label = "MLPerf Inference v4.1",
    source = "MLCommons, MLPerf Inference v4.1 datacenter results (closed division, llama2-70b-99), the submissions' own "
          .. "mlperf_log_summary.txt: github.com/mlcommons/inference_results_v4.1",
    tokens_per_second = {
      Offline = { ["AMD 8× MI300X"] = 23514.8, ["NVIDIA DGX 8× H100"] = 24524.9 },
      Server = { ["AMD 8× MI300X"] = 21028.23, ["NVIDIA DGX 8× H100"] = 21605.79 },
    },
  },
}
