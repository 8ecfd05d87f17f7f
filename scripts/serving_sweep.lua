-- serving_sweep.lua — the Dell/Metrum serving sweep (seed 004) on one GPU droplet: vLLM under
-- 64 … 2048 concurrent streams over a pool of varied prompts (the "prompt randomizer"), with the
-- server's own /metrics and the GPU sampled throughout.
--
-- What it measures: per concurrency level, output and total token throughput, TTFT/TPOT/ITL
-- percentiles, failures; vLLM's running/waiting requests and KV-cache use (metrics.start); GPU
-- power, VRAM and utilisation. Writes results.json, report.md, report.html (throughput and
-- latency against concurrency), sweep.csv/sweep.json, a folder per level.
--
-- What it costs: gpu-mi300x1-192gb at $1.99/h; about 40-60 minutes with the model download
-- (about $1.50-2). Rehearse it for free with: runara --sim scripts/serving_sweep.lua
--
-- Params (key=value): size=gpu-mi300x1-192gb image=gpu-amd-base region=atl1
--   model=meta-llama/Llama-3.3-70B-Instruct quantization=fp8 levels=64,128,256,512,1024,2048
--   input_tokens=1024 range_ratio=0.5 max_tokens=256 (64 under --sim) requests_per_stream=2 (1 under --sim)
--   remote=false (load from this machine; by default runara-agent loads the server from the droplet)
-- Secrets: --secret HF_TOKEN (gated model; not needed under --sim).
local report = require("runara.report")
local vllm = require("runara.vllm")
local suite = require("runara.suite")
local machine = require("runara.machine")

local P = runara.params
local size = P.size or "gpu-mi300x1-192gb"
local model = P.model or "meta-llama/Llama-3.3-70B-Instruct"
local quantization = P.quantization or "fp8"

local function levels()
  local out = {}
  for n in (P.levels or "64,128,256,512,1024,2048"):gmatch("[^,]+") do
    local c = tonumber(n)
    if not c or c < 1 or c % 1 ~= 0 then error("serving_sweep: levels must be whole numbers like 64,128, got " .. n, 0) end
    out[#out + 1] = c
  end
  return out
end

local hf_ok, HF_TOKEN = pcall(runara.secret, "HF_TOKEN")  -- asked before anything is created
if not hf_ok then HF_TOKEN = nil end

local rep = report.new{ title = "vLLM serving sweep: " .. model .. " on " .. size, simulated = runara.simulated }
rep:metadata{ model = model, quantization = quantization:upper(), size = size }

local function run()
  rep:phase("boot")
  local d = droplet.create{ name = "sweep", size = size, image = P.image or "gpu-amd-base", region = P.region or "atl1" }
  rep:bill(d)  -- its cost goes into the report, a partial one too
  rep:metadata{ machine = d.name, region = d.region, hourly_usd = d.price_hourly }
  local s = ssh.connect(d, { wait_cloud_init = true })
  local gpu = gpu_metrics.start(s, { interval = 1 })
  rep.gpu_sampler = gpu
  local info = machine.describe(s)
  rep:metadata{ gpu = info.gpu, gpu_count = info.gpu_count, gpu_vram_gb = info.gpu_vram_gb,
                driver_version = info.driver_version, rocm_version = info.rocm_version, cuda_version = info.cuda_version }
  rep:phase("model_load")
  local server = vllm.start(s, { model = model, quantization = quantization, hf_token = HF_TOKEN,
                                 max_model_len = tonumber(P.max_model_len or 8192) })
  rep:metadata{ framework = "vLLM " .. server.version }
  local server_metrics = metrics.start(server.url .. "/metrics", { interval = 1, prefix = "vllm:" })
  local sim = runara.simulated
  suite.sweep(server, {
    concurrency = levels(), report = rep, gpu = gpu, remote = P.remote ~= "false",
    input_tokens = tonumber(P.input_tokens or 1024), range_ratio = tonumber(P.range_ratio or 0.5),
    max_tokens = tonumber(P.max_tokens or (sim and 64 or 256)),
    requests_per_stream = tonumber(P.requests_per_stream or (sim and 1 or 2)),
  })
  local m = server_metrics:stop()
  rep:set("benchmarks.vllm_metrics", m.summary)
  rep:add_gpu(gpu:stop())
  rep.gpu_sampler = nil
  server:download_log("logs/vllm.log")
  server:stop()
end

rep:run(run, function(paths) print("\n" .. rep:summary(paths)) end)
