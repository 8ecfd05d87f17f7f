-- serving_sweep.lua — the vLLM serving sweep of Dell and Metrum AI's MI300X study (PowerEdge XE9680, August 2024) on one GPU droplet: vLLM under
-- 64 … 2048 concurrent streams over a pool of varied prompts (the "prompt randomizer"), with the
-- server's own /metrics and the GPU sampled throughout.
--
-- What it measures: per concurrency level, output and total token throughput, TTFT/TPOT/ITL
-- percentiles, failures; vLLM's running/waiting requests and KV-cache use (metrics.start); GPU
-- power, VRAM and utilisation. Writes results.json, report.md, report.html (throughput and
-- latency against concurrency), sweep.csv/sweep.json (a row per level), a folder per level.
-- Ctrl-C still writes a PARTIAL report.
--
-- What it costs: gpu-mi300x1-192gb at $1.99/h; about 40-60 minutes with the model download
-- (about $1.50-2). Rehearse it for free with: runara --sim scripts/serving_sweep.lua
-- Elsewhere: --on root@HOST (a machine of yours) or --on http://HOST:8000 (a running server).
-- Params: runara scripts/serving_sweep.lua --help
-- Secrets: --secret HF_TOKEN (gated model; not needed under --sim).
local scenario = require("runara.scenario")
local defaults = require("runara.droplet_defaults")
local suite = require("runara.suite")

-- Params of the server runara starts (on a droplet or a machine of yours): none under --on URL.
local VLLM_STARTED = { "droplet", "machine" }

local sim = runara.simulated
scenario.run({
  about = "The vLLM serving sweep of Dell and Metrum AI's MI300X study (PowerEdge XE9680, August 2024):\n" ..
          "one load per concurrency level over a pool of varied prompts, with vLLM's /metrics and the GPU sampled throughout.",
  -- Under --on URL, p.model is what the server serves, and the server need not be vLLM.
  title = function(p, where)
    return (scenario.where() == "endpoint" and "Serving sweep: " or "vLLM serving sweep: ") .. p.model .. " on " .. where
  end,
  params = {
    { name = "size", default = "gpu-mi300x1-192gb", help = "droplet size", applies = { "droplet" } },
    defaults.image_param(),
    defaults.region_param(),
    { name = "model", default = "meta-llama/Llama-3.3-70B-Instruct", help = "Hugging Face model id" },
    { name = "quantization", default = "fp8", help = "vLLM --quantization", applies = VLLM_STARTED },
    { name = "max_model_len", type = "integer", default = 8192, min = 1, help = "vLLM --max-model-len", applies = VLLM_STARTED },
    { name = "levels", type = "integers", min = 1, default = { 64, 128, 256, 512, 1024, 2048 }, help = "concurrency levels" },
    { name = "input_tokens", type = "integer", default = 1024, min = 1, help = "mean prompt length in tokens" },
    { name = "range_ratio", type = "number", default = 0.5, min = 0, max = 1, help = "prompt lengths vary by ± this fraction" },
    { name = "max_tokens", type = "integer", min = 1, default = sim and 64 or 256, default_help = "256; 64 under --sim",
      help = "tokens generated per request" },
    { name = "requests_per_stream", type = "integer", min = 1, default = sim and 1 or 2, default_help = "2; 1 under --sim",
      help = "requests per level = this x the level" },
    { name = "remote", type = "boolean", default = true, help = "load from the machine itself (runara-agent)", applies = VLLM_STARTED },
  },
}, function(sc)
  local P, rep = sc.params, sc.report
  local hf_ok, HF_TOKEN = pcall(runara.secret, "HF_TOKEN")  -- asked before anything is created
  if not hf_ok then HF_TOKEN = nil end
  rep:metadata{ model = P.model, quantization = scenario.where() ~= "endpoint" and P.quantization:upper() or nil,
                size = scenario.where() == "droplet" and P.size or nil }
  rep:phase("boot")
  local m = sc:machine{ name = "sweep", size = P.size, image = P.image, region = P.region }
  rep:phase("model_load")
  local server = sc:serve(m, { model = P.model, quantization = P.quantization, hf_token = HF_TOKEN,
                               max_model_len = P.max_model_len })
  if not server.endpoint then rep:metadata{ framework = "vLLM " .. server.version } end
  local server_metrics = metrics.start(server.url .. "/metrics", { interval = 1, prefix = "vllm:" })
  suite.sweep(server, {
    concurrency = P.levels, report = rep, gpu = m and m.gpu, remote = P.remote,
    input_tokens = P.input_tokens, range_ratio = P.range_ratio, max_tokens = P.max_tokens,
    requests_per_stream = P.requests_per_stream,
  })
  rep:add_server_metrics(server_metrics:stop())  -- vLLM's running/waiting requests and KV cache, charted
  if m and m.gpu then
    rep:add_gpu(m.gpu:stop())
    rep.gpu_sampler = nil
  end
  if not server.endpoint then
    server:download_log("logs/vllm.log")
    server:stop()
  end
end)
