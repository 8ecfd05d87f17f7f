-- llama70b_fp8.lua — the Runara plan (seed 000) end to end: Llama-3.3-70B-Instruct in FP8 served
-- by vLLM on one AMD MI300X droplet, measured like the published H100 numbers.
--
-- What it measures: single-stream throughput with a long generation, time to first token on a
-- short prompt, throughput at 10 and 32 concurrent requests (runara.suite), GPU power, VRAM and
-- utilisation sampled throughout (gpu_metrics), the server's start-up time. Writes results.json
-- (seed 000 §5.1 layout plus http_load's full metrics), report.md (§5.2 comparison table) and
-- report.html (charts), the vLLM log in logs/, a folder per load.
--
-- What it costs: gpu-mi300x1-192gb is $1.99/h; a full run takes about 30-45 minutes, most of it
-- downloading the 70 GB model (about $1-1.50). Budget and time are capped by runara (--budget,
-- --max-runtime); the droplet is destroyed at the end whatever happens. Rehearse it first, free:
--   runara --sim scripts/llama70b_fp8.lua
--
-- Params (key=value on the command line):
--   size=gpu-mi300x1-192gb  image=gpu-amd-base  region=atl1
--   model=meta-llama/Llama-3.3-70B-Instruct  quantization=fp8  max_model_len=8192
--   gpu_memory_utilization=0.9  mode=docker|pip  vllm_image=rocm/vllm:latest
--   ready_timeout=1800 (seconds for the server to answer)  profile=full|quick (default full; quick on the simulated cloud)
--   remote=false (load from this machine through a tunnel; by default runara-agent loads the server
--   from the droplet itself, so the numbers carry no network between you and the cloud)
-- Secrets: --secret HF_TOKEN (the model is gated on Hugging Face; not needed under --sim).
local report = require("runara.report")
local vllm = require("runara.vllm")
local suite = require("runara.suite")
local machine = require("runara.machine")

local P = runara.params
local size = P.size or "gpu-mi300x1-192gb"
local model = P.model or "meta-llama/Llama-3.3-70B-Instruct"
local quantization = P.quantization or "fp8"

local function hf_token()
  local ok, token = pcall(runara.secret, "HF_TOKEN")
  if ok then return token end
  if not runara.simulated then
    runara.log("note: no HF_TOKEN secret (--secret HF_TOKEN); a gated model will fail to download")
  end
  return nil
end

-- Asked for before anything is created (a missing grant is known before money is spent).
local HF_TOKEN = hf_token()

local rep = report.new{
  title = "Llama-3.3-70B-Instruct " .. quantization:upper() .. " on " .. size,
  simulated = runara.simulated,
  reference = "llama70b_fp8",
}
rep:metadata{ model = model, quantization = quantization:upper(), size = size }

local function run()
  rep:phase("boot")
  local d = droplet.create{ name = "llama70b", size = size, image = P.image or "gpu-amd-base",
                            region = P.region or "atl1" }
  rep:bill(d)  -- its cost goes into the report, a partial one too
  rep:metadata{ machine = d.name, region = d.region, hourly_usd = d.price_hourly }
  local s = ssh.connect(d, { wait_cloud_init = true })
  local gpu = gpu_metrics.start(s, { interval = 1 })
  rep.gpu_sampler = gpu
  local info = machine.describe(s)
  rep:metadata{ gpu = info.gpu, gpu_count = info.gpu_count, gpu_vram_gb = info.gpu_vram_gb,
                driver_version = info.driver_version, rocm_version = info.rocm_version,
                cuda_version = info.cuda_version, os = info.os }

  rep:phase("model_load")
  local server = vllm.start(s, {
    model = model, quantization = quantization, mode = P.mode, image = P.vllm_image,
    max_model_len = tonumber(P.max_model_len or 8192),
    gpu_memory_utilization = tonumber(P.gpu_memory_utilization or 0.9),
    hf_token = HF_TOKEN, ready_timeout = tonumber(P.ready_timeout),
  })
  rep:metadata{ framework = "vLLM " .. server.version, server_ready_s = server.ready_s }

  suite.run(server, { report = rep, gpu = gpu, profile = P.profile, remote = P.remote ~= "false" })
  rep:phase("done")
  server:download_log("logs/vllm.log")
  rep:add_gpu(gpu:stop())
  rep.gpu_sampler = nil
  server:stop()
end

rep:run(run, function(paths) print("\n" .. rep:summary(paths)) end)
