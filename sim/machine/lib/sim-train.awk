# The model behind lib/sim-train: prints train_bench.py's JSON lines for one part. Variables:
# gpu part sizes dtypes steps warm batch_opt nproc quick seed (see sim-train).
function noise() { return 1 + (rand() - 0.5) * 0.02 }
function r1(x) { return sprintf("%.1f", x) }
function r4(x) { return sprintf("%.4f", x) }
function params(l, d, ff, s) { return l * (4 * d * d + 2 * d * ff + 9 * d + ff) + (50257 + s) * d + 2 * d }
BEGIN {
  srand(seed)
  # Achieved BF16 GEMM against the MI350X's (seed 001: 1104; SemiAnalysis: MI300X ~620, H100 ~720).
  ratio["mi350x"] = 1; ratio["mi300x"] = 620 / 1104; ratio["h100"] = 720 / 1104
  k = ratio[gpu]
  if (gpu == "mi300x") { name = "AMD Instinct MI300X"; mem = 205822885888; torch = "2.5.1+rocm6.2"; cuda = "null"; hip = "\"6.2.41133-dd7f95766\"" }
  else if (gpu == "mi350x") { name = "AMD Instinct MI350X"; mem = 309220868096; torch = "2.9.0+rocm7.0.0"; cuda = "null"; hip = "\"7.0.51831-a3e329ad8\"" }
  else { name = "NVIDIA H100 80GB HBM3"; mem = 85045231616; torch = "2.5.0a0+e000cf0ad9.nv24.10"; cuda = "\"12.6\""; hip = "null" }
  world = nproc > 0 ? nproc : 1
  if (nnodes < 1) nnodes = 1
  world = world * nnodes
  if (part == "env") {
    printf "{\"part\": \"env\", \"gpu\": \"%s\", \"gpu_count\": %d, \"memory_total_bytes\": %.0f, \"torch\": \"%s\", \"cuda\": %s, \"hip\": %s, \"world_size\": %d, \"simulated\": true}\n", name, ENVIRON["RUNARA_SIM_GPU_COUNT"] + 0, mem, torch, cuda, hip, world
    exit
  }
  nd = split(dtypes, dt, ",")
  # seed 001 Benchmark 1 (FP16, 20 iterations); BF16 ran ~4.6 % faster in its Benchmark 1b.
  mm[4096] = 775; mm[8192] = 1019; mm[16384] = 1022
  if (part == "matmul") {
    nn = split(quick ? "4096,8192" : "4096,8192,16384", sq, ",")
    for (d = 1; d <= nd; d++) for (i = 1; i <= nn; i++) {
      n = sq[i]; tf = mm[n] * k * (dt[d] == "bf16" ? 1.046 : 1) * noise(); ms = 2 * n ^ 3 / (tf * 1e12) * 1e3
      printf "{\"part\": \"matmul\", \"n\": %d, \"dtype\": \"%s\", \"iters\": 20, \"total_s\": %s, \"median_ms\": %s, \"tflops\": %s, \"simulated\": true}\n", n, dt[d], r4(ms * 20 / 1e3), r4(ms), r1(tf)
    }
    exit
  }
  # seed 001 Benchmark 1b: FP16 TFLOPS per Llama-70B shape; its library comparison where it has one.
  nsh = split("8192,8192,8192,Standard Square (8K),1053,1046,1206;16384,8192,7168,FFN GEMM 1,1039,0,0;16384,16384,16384,Large Square (16K),1020,0,0;16384,1024,8192,Attention Output,981,0,0;16384,3584,8192,FFN GEMM 2,979,0,0;4096,4096,4096,Standard Square (4K),940,939,1053;16384,8192,1280,Fused QKV Projection,863,863,970", shapes, ";")
  if (part == "linear" || part == "fp8") {
    for (d = 1; d <= (part == "fp8" ? 1 : nd); d++) for (i = 1; i <= nsh; i++) {
      split(shapes[i], s, ",")
      if (quick && s[1] * s[2] * s[3] > 8192 ^ 3) continue
      flop = 2 * s[1] * s[2] * s[3]
      if (part == "fp8") {
        tf = s[5] * 1.046 * 1.6 * k * noise()
        printf "{\"part\": \"fp8\", \"status\": \"ok\", \"m\": %d, \"n\": %d, \"k\": %d, \"name\": \"%s\", \"dtype\": \"%s\", \"median_ms\": %s, \"tflops\": %s, \"simulated\": true}\n", s[1], s[2], s[3], s[4], gpu == "mi300x" ? "float8_e4m3fnuz" : "float8_e4m3fn", r4(flop / (tf * 1e12) * 1e3), r1(tf)
        continue
      }
      m = (s[6] > 0 ? s[6] : s[5]) * (dt[d] == "bf16" ? 1.046 : 1)
      # F.linear beat matmul by 11-15 % on seed 001's MI350X (rocBLAS); elsewhere both take one path.
      l = gpu == "mi350x" ? m * (s[7] > 0 ? s[7] / s[6] : 1.12) : m
      m = m * k * noise(); l = l * k * noise()
      printf "{\"part\": \"linear\", \"m\": %d, \"n\": %d, \"k\": %d, \"name\": \"%s\", \"dtype\": \"%s\", \"warmup\": 30, \"reps\": 200, \"matmul_ms\": %s, \"matmul_tflops\": %s, \"linear_ms\": %s, \"linear_tflops\": %s, \"simulated\": true}\n", s[1], s[2], s[3], s[4], dt[d], r4(flop / (m * 1e12) * 1e3), r1(m), r4(flop / (l * 1e12) * 1e3), r1(l)
    }
    exit
  }
  if (part == "mlp") {
    sps = 124517 * k * noise(); n = quick ? 20 : 100
    printf "{\"part\": \"mlp\", \"dtype\": \"bf16\", \"batch\": 256, \"steps\": %d, \"params\": 134238208, \"total_s\": %s, \"samples_per_s\": %s, \"ms_per_step\": %.3f, \"simulated\": true}\n", n, r4(256 * n / sps), r1(sps), 256 / sps * 1e3
    exit
  }
  # seed 001 Benchmark 3: layers heads d ff batch seq tokens/s memory(GB)
  cfg["small"] = "6 6 384 1536 32 512 950586 9.7"; cfg["medium"] = "12 12 768 3072 16 512 298957 9.8"
  cfg["large"] = "24 16 1024 4096 8 512 107626 11.3"; cfg["xl"] = "36 20 1280 5120 4 512 40054 12.6"
  cfg["1.5b"] = "48 24 1536 6144 4 512 24195 20.7"; cfg["3b"] = "32 32 2560 10240 2 512 11980 26.9"
  cfg["7b"] = "32 32 4096 11008 8 1024 18381 107.9"; cfg["13b"] = "40 40 5120 13824 4 1024 7941 119.7"
  # seed 001 Benchmark 4 (7B): scaling efficiency by GPU count
  eff[1] = 1; eff[2] = 0.776; eff[4] = 0.857; eff[8] = 0.483
  nz = split(sizes, sz, ",")
  for (i = 1; i <= nz; i++) {
    split(cfg[sz[i]], c, " ")
    p = params(c[1], c[3], c[4], c[6]); b = batch_opt > 0 ? batch_opt : c[5]
    # 8 bytes/param (bf16 weights, grads, two AdamW states) and the seed's rest as activations, by batch.
    need = 8 * p + (c[8] * 1e9 - 8 * p) * b / c[5] + (world > 1 ? 2 * p : 0)
    head = sprintf("{\"part\": \"%s\", \"size\": \"%s\", \"dtype\": \"bf16\", \"layers\": %d, \"heads\": %d, \"d_model\": %d, \"d_ff\": %d, \"batch\": %d, \"seq\": %d, \"world_size\": %d, \"warmup\": %d, \"steps\": %d, \"memory_total_bytes\": %.0f, \"params\": %.0f", part, sz[i], c[1], c[2], c[3], c[4], b, c[6], world, warm, steps, mem, p)
    if (need > mem * 0.97) {
      tried = need - mem * 0.9
      printf "train_bench[0]: %s: out of memory: %s out of memory. Tried to allocate %.2f GiB. GPU 0 has a total capacity of %.2f GiB\n", sz[i], gpu == "h100" ? "CUDA" : "HIP", tried / 2 ^ 30, mem / 2 ^ 30 > "/dev/stderr"
      printf "%s, \"status\": \"skipped\", \"reason\": \"out of memory\", \"allocated_bytes\": %.0f, \"tried_bytes\": %.0f, \"estimated_bytes\": %.0f, \"error\": \"%s out of memory. Tried to allocate %.2f GiB.\", \"simulated\": true}\n", head, mem * 0.9, tried, need, gpu == "h100" ? "CUDA" : "HIP", tried / 2 ^ 30
      continue
    }
    local_world = world / nnodes
    e = local_world in eff ? eff[local_world] : 0.8
    # Across nodes (an assumption, not a measurement): each step adds a ring all-reduce of the bf16
    # gradients (2 bytes/param) between the nodes, 2 (N-1)/N of them over each node's 10 Gbit/s of
    # VPC (TCP, no RDMA), not overlapped with compute.
    step = local_world * b * c[6] / (c[7] * k * local_world * e * noise())
    if (nnodes > 1) step += 2 * (nnodes - 1) / nnodes * 2 * p / 1.25e9
    tps = world * b * c[6] / step; total = step * steps
    nodes = nnodes > 1 ? sprintf(", \"nnodes\": %d, \"tokens_per_s_per_node\": %s", nnodes, r1(tps / nnodes)) : ""
    printf "%s, \"status\": \"ok\", \"total_s\": %s, \"tokens_per_s\": %s, \"tokens_per_s_per_gpu\": %s%s, \"ms_per_step\": %.3f, \"peak_memory_bytes\": %.0f, \"simulated\": true}\n", head, r4(total), r1(tps), r1(tps / world), nodes, total / steps * 1e3, need * noise()
  }
}
