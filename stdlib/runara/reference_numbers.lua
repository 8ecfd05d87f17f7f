-- Reference numbers the reports compare a run against, each with where it comes from, named the
-- way a reader can look it up (docs/references.md: each source, its date and conditions). The
-- keys ending in seed001 hold an 8x MI350X training benchmark report that Runara started from
-- (its title and conditions below); the reports name it by that title.
-- A reference applies only to its own model and quantization: report.new{ reference = KEY } shows
-- it only when the report's metadata names that model (or none), see docs/report.md.
return {
  -- Published measurements only (no estimate is ever a reference): MLPerf Inference v4.1's
  -- llama2-70b-99 results, copied from the submissions' own mlperf_log_summary.txt; their URLs,
  -- date and conditions are in docs/references.md. Their conditions differ from the flagship's
  -- (another model, 8 GPUs, another engine, a fixed dataset), so a row shows the figure beside
  -- this run's with its conditions and no ratio is computed. Single-stream throughput, VRAM and
  -- power have no published measurement of the same kind: those rows have none.
  llama70b_fp8 = {
    label = "MLPerf v4.1 8× H100, per GPU (other conditions)",
    published = true,
    source = "MLCommons, MLPerf Inference v4.1 datacenter results (closed division, published 2024-08-28), llama2-70b-99, "
          .. "NVIDIA DGX-H100_H100-SXM-80GBx8_TRT (TensorRT-LLM): the submission's own mlperf_log_summary.txt, "
          .. "https://github.com/mlcommons/inference_results_v4.1/tree/main/closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99 "
          .. "(sources and conditions: docs/references.md)",
    conditions = "Llama-2-70B, not Llama-3.3-70B; 8 GPUs (totals divided by 8 here); TensorRT-LLM, not vLLM; MLPerf's OpenOrca "
          .. "prompts and LoadGen; AMD's 8× MI300X (vLLM, FP8) in the same round: Offline 2939 tokens/s per GPU",
    model = "meta-llama/Llama-3.3-70B-Instruct",
    quantization = "FP8",
    concurrent_32_tps = 3065.6,  -- Offline: 24524.9 tokens/s over 8 GPUs
    concurrent_32_note = "MLPerf Offline (every query at once, not 32 concurrent): 24524.9 tokens/s ÷ 8 GPUs",
    ttft_ms = 273.0,             -- Server: 50th percentile first-token latency, 272954995 ns
    ttft_note = "MLPerf Server median first-token latency at 75 queries/s over 8 GPUs (under load, not one short prompt alone)",
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
  -- Dense (no sparsity) peak matrix TFLOPS per GPU and dtype, for MFU. NVIDIA's datasheets print
  -- the sparse figure for FP16/BF16/FP8 ("with sparsity"): halved here. FP16 and BF16 peak alike.
  training_peaks = {
    label = "vendor datasheets (dense peak)",
    gpus = {
      mi300x = { name = "AMD Instinct MI300X", dense_tflops = { fp16 = 1307.4, bf16 = 1307.4, fp8 = 2614.9 },
        source = "AMD Instinct MI300X Accelerator data sheet, https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/amd-instinct-mi300x-data-sheet.pdf" },
      mi325x = { name = "AMD Instinct MI325X", dense_tflops = { fp16 = 1307.4, bf16 = 1307.4, fp8 = 2614.9 },
        source = "AMD Instinct MI325X Accelerator data sheet, https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/product-briefs/instinct-mi325x-datasheet.pdf" },
      mi350x = { name = "AMD Instinct MI350X", dense_tflops = { fp16 = 2306.9, bf16 = 2306.9, fp8 = 4613.7 },
        source = "AMD Instinct MI350X product page and data sheet (2.3 PFLOPS FP16/BF16, 4.6 PFLOPS FP8 dense), https://www.amd.com/en/products/accelerators/instinct/mi350/mi350x.html" },
      mi355x = { name = "AMD Instinct MI355X", dense_tflops = { fp16 = 2516.6, bf16 = 2516.6, fp8 = 5033.2 },
        source = "AMD Instinct MI355X product page and data sheet (2.5 PFLOPS FP16/BF16, 5.0 PFLOPS FP8 dense), https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html" },
      h100_sxm = { name = "NVIDIA H100 SXM", dense_tflops = { fp16 = 989.4, bf16 = 989.4, fp8 = 1978.9 },
        source = "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column (1,979 BF16 / 3,958 FP8 TFLOPS with sparsity, halved), https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet" },
      h100_pcie = { name = "NVIDIA H100 PCIe", dense_tflops = { fp16 = 756.5, bf16 = 756.5, fp8 = 1513 },
        source = "NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe column (1,513 BF16 / 3,026 FP8 TFLOPS with sparsity, halved), https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet" },
      h200 = { name = "NVIDIA H200 SXM", dense_tflops = { fp16 = 989.4, bf16 = 989.4, fp8 = 1978.9 },
        source = "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column (1,979 BF16 / 3,958 FP8 TFLOPS with sparsity, halved), https://www.nvidia.com/en-us/data-center/h200/" },
    },
  },
  -- "AMD MI350X Training Benchmark Results" (AMD MI350X, 8 GPUs, ROCm 7.0.0, PyTorch 2.9.0): its training tables as printed.
  training_seed001 = {
    label = "MI350X (published)",
    gpu = "AMD Instinct MI350X",
    source = "\"AMD MI350X Training Benchmark Results\" (8× AMD Instinct MI350X, ROCm 7.0.0, PyTorch 2.9.0, tested 2026-01-08)",
    -- Benchmark 1, FP16, 20 iterations: TFLOPS by square size
    matmul_fp16_tflops = { [4096] = 775, [8192] = 1019, [16384] = 1022 },
    -- Benchmark 1b, library comparison (TFLOPS): torch.matmul (hipBLASLt) and F.linear (rocBLAS)
    linear = {
      ["8192x8192x8192"] = { matmul = 1046, linear = 1206 },
      ["16384x8192x1280"] = { matmul = 863, linear = 970 },
      ["4096x4096x4096"] = { matmul = 939, linear = 1053 },
    },
    mlp = { batch = 256, steps = 100, samples_per_s = 124517, ms_per_step = 2.06 },
    -- Benchmark 3: params, batch, seq, tokens/s, TFLOPS, memory (GB as printed), ms/step
    transformer = {
      small = { params = 30e6, batch = 32, seq = 512, tokens_per_s = 950586, tflops = 171.8, memory_gb = 9.7, ms_per_step = 17.2 },
      medium = { params = 124e6, batch = 16, seq = 512, tokens_per_s = 298957, tflops = 222.4, memory_gb = 9.8, ms_per_step = 27.4 },
      large = { params = 354e6, batch = 8, seq = 512, tokens_per_s = 107626, tflops = 228.7, memory_gb = 11.3, ms_per_step = 38.1 },
      xl = { params = 773e6, batch = 4, seq = 512, tokens_per_s = 40054, tflops = 185.8, memory_gb = 12.6, ms_per_step = 51.1 },
      ["1.5b"] = { params = 1.44e9, batch = 4, seq = 512, tokens_per_s = 24195, tflops = 208.6, memory_gb = 20.7, ms_per_step = 84.7 },
      ["3b"] = { params = 2.65e9, batch = 2, seq = 512, tokens_per_s = 11980, tflops = 190.3, memory_gb = 26.9, ms_per_step = 85.5 },
      ["7b"] = { params = 5.24e9, batch = 8, seq = 1024, tokens_per_s = 18381, tflops = 578.3, memory_gb = 107.9, ms_per_step = 445.7 },
      ["13b"] = { params = 10.12e9, batch = 4, seq = 1024, tokens_per_s = 7941, tflops = 482.2, memory_gb = 119.7, ms_per_step = 515.8 },
    },
    -- Benchmark 4, 7B: GPUs -> tokens/s, total TFLOPS, scaling efficiency as printed
    ddp_7b = {
      { gpus = 1, tokens_per_s = 18324, tflops = 577, efficiency = 1.0 },
      { gpus = 2, tokens_per_s = 28451, tflops = 895, efficiency = 0.776 },
      { gpus = 4, tokens_per_s = 62813, tflops = 1976, efficiency = 0.857 },
      { gpus = 8, tokens_per_s = 70763, tflops = 2226, efficiency = 0.483 },
    },
  },
  -- That report's Benchmark 5: torchtune fine-tuning of Qwen3-8B through AMD's MAD
  -- (`madengine run --tags pyt_train_qwen3-8b`) on 8x MI350X, batch 14, sequence 8192, compile
  -- and activation checkpointing on. Memory as the report prints it ("GB", torchtune's
  -- peak_memory_alloc). Keyed method_dtype; the LoRA loss curve is its "Training Progress" table.
  finetune_seed001 = {
    label = "MI350X (published, 8 GPUs)",
    gpu = "AMD Instinct MI350X",
    model = "Qwen/Qwen3-8B",
    gpus = 8, batch = 14, seq = 8192,
    source = "\"AMD MI350X Training Benchmark Results\", Benchmark 5: MAD Framework Training (Qwen3-8B) " ..
             "(8× AMD Instinct MI350X, ROCm 7.0.0, PyTorch 2.9.0, tested 2026-01-08)",
    runs = {
      full_fp8 = { tokens_per_s_per_gpu = 20497, tokens_per_s = 163976, memory_gb = 76.35 },
      full_bf16 = { tokens_per_s_per_gpu = 14471, tokens_per_s = 115768, memory_gb = 76.35 },
      lora_bf16 = { tokens_per_s_per_gpu = 16312, tokens_per_s = 130496, memory_gb = 72.65 },
    },
    lora_loss = { { step = 1, loss = 2.011 }, { step = 5, loss = 1.889 }, { step = 10, loss = 1.785 }, { step = 11, loss = 1.765 } },
  },
}
