-- gemm.lua — raw GEMM throughput of one GPU droplet, seed 001's method (warm-up 30, 200
-- repetitions, median; the Llama-70B training shapes; FP16 and BF16), run with PyTorch in the
-- GPU vendor's container; a TFLOPS table compared with SemiAnalysis's published figures.
--
-- What it measures: TFLOPS per (shape, dtype), GPU power while it runs. Writes results.json,
-- report.md/report.html (the table), gemm.jsonl (one line per shape and dtype).
-- What it costs: gpu-mi300x1-192gb at $1.99/h; about 15 minutes including the container pull
-- (about $0.50). Rehearse it for free: runara --sim scripts/gemm.lua
--
-- Params: size=gpu-mi300x1-192gb image=gpu-amd-base region=atl1 (an H100: size=gpu-h100x1-80gb
-- image=gpu-h100x1-base region=nyc2) container=<image> warmup=30 reps=200 dtypes=fp16,bf16
local report = require("runara.report")
local machine = require("runara.machine")

local P = runara.params
local size = P.size or "gpu-mi300x1-192gb"
local rep = report.new{ title = "GEMM TFLOPS on " .. size, simulated = runara.simulated }
rep:metadata{ size = size, method = "seed 001: warm-up 30, 200 repetitions, median, Llama-70B shapes" }

local function parse(lines)
  local rows, results = {}, {}
  for line in lines:gmatch("[^\n]+") do
    if line:match("^{") then
      local m, n, k = line:match('"m": (%d+), "n": (%d+), "k": (%d+)')
      local r = { m = tonumber(m), n = tonumber(n), k = tonumber(k), name = line:match('"name": "([^"]*)"'),
                  dtype = line:match('"dtype": "(%w+)"'), median_ms = tonumber(line:match('"median_ms": ([%d%.]+)')),
                  tflops = tonumber(line:match('"tflops": ([%d%.]+)')) }
      if r.m and r.tflops then
        results[#results + 1] = r
        rows[#rows + 1] = { string.format("(%d, %d, %d)", r.m, r.n, r.k), r.name, r.dtype, string.format("%.3f", r.median_ms), string.format("%.0f", r.tflops) }
      end
    end
  end
  return rows, results
end

local function run()
  rep:phase("boot")
  local d = droplet.create{ name = "gemm", size = size, image = P.image or "gpu-amd-base", region = P.region or "atl1" }
  rep:bill(d)  -- its cost goes into the report, a partial one too
  rep:metadata{ machine = d.name, region = d.region, hourly_usd = d.price_hourly }
  local s = ssh.connect(d, { wait_cloud_init = true })
  local info = machine.describe(s)
  rep:metadata{ gpu = info.gpu, gpu_count = info.gpu_count, gpu_vram_gb = info.gpu_vram_gb,
                driver_version = info.driver_version, rocm_version = info.rocm_version, cuda_version = info.cuda_version }
  -- The vendor's PyTorch container and device flags (runara.container), by the machine's GPU tool.
  local containers = require("runara.container")
  local vendor = containers.vendor(s)
  local container = P.container or containers.image(vendor, "pytorch")
  s:exec("mkdir -p gemm", { quiet = true })
  s:upload("gemm/gemm_bench.py", "gemm/gemm_bench.py")
  local gpu = gpu_metrics.start(s, { interval = 1 })
  rep.gpu_sampler = gpu
  rep:phase("gemm")
  local r = s:exec(containers.command{ vendor = vendor, purpose = "pytorch", image = container,
    name = "runara-gemm-" .. runara.run_id, mounts = { "$HOME/gemm:/workspace" },
    command = string.format("python3 /workspace/gemm_bench.py --warmup %d --reps %d --dtypes %s",
      tonumber(P.warmup or 30), tonumber(P.reps or 200), P.dtypes or "fp16,bf16") }, { timeout = 3600 })
  rep:add_gpu(gpu:stop())
  rep.gpu_sampler = nil
  local rows, results = parse(r.stdout)
  if #results == 0 then error("gemm: the benchmark printed no result; its output ended with:\n" .. r.stdout:sub(-2000), 0) end
  runara.write_file("gemm.jsonl", r.stdout)
  local ref = require("runara.reference_numbers").gemm
  rep:add_table("GEMM", { columns = { "shape (M, N, K)", "what", "dtype", "median (ms)", "TFLOPS" }, rows = rows,
    caption = "SemiAnalysis BF16 reference (" .. ref.source .. "): MI300X ~" .. ref.bf16_tflops.mi300x .. ", H100 ~" .. ref.bf16_tflops.h100 .. " TFLOPS" })
  local best = {}
  for _, x in ipairs(results) do best[x.dtype] = math.max(best[x.dtype] or 0, x.tflops) end
  rep:set("benchmarks.gemm", { results = results, peak_tflops = best, container = container })
end

rep:run(run, function(paths) print("\nreport: " .. paths.html) end)
