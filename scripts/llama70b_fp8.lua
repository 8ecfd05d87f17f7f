-- llama70b_fp8.lua — the flagship job end to end: Llama-3.3-70B-Instruct in FP8 served by vLLM on
-- one AMD MI300X droplet, shown beside published MLPerf Inference measurements (their conditions
-- differ, and the reports say how: docs/references.md).
--
-- What it measures: single-stream throughput with a long generation, time to first token on a
-- short prompt, throughput at 10 and 32 concurrent requests (runara.suite), GPU power, VRAM and
-- utilisation sampled throughout (gpu_metrics), the server's start-up time. Writes results.json
-- (the project's results layout plus http_load's full metrics), report.md and report.html (charts,
-- beside published MLPerf figures with their conditions; VRAM as vLLM allocated it), the vLLM log in logs/, a folder per load. Ctrl-C or a
-- failure still writes the report, marked PARTIAL.
--
-- What it costs: gpu-mi300x1-192gb is $1.99/h; a full run takes about 30-45 minutes, most of it
-- downloading the 70 GB model (about $1-1.50). Budget and time are capped by runara (--budget,
-- --max-runtime); the droplet is destroyed at the end whatever happens. Rehearse it first, free:
--   runara --sim scripts/llama70b_fp8.lua
-- Elsewhere: runara --on root@10.1.2.3 scripts/llama70b_fp8.lua (a machine of yours) or
--   runara --on http://10.1.2.3:8000 scripts/llama70b_fp8.lua (a server already running).
-- Params: runara scripts/llama70b_fp8.lua --help
-- Secrets: --secret HF_TOKEN (the model is gated on Hugging Face; not needed under --sim).
local scenario = require("runara.scenario")
local defaults = require("runara.droplet_defaults")
local suite = require("runara.suite")

-- Params of the server runara starts (on a droplet or a machine of yours): none under --on URL.
local VLLM_STARTED = { "droplet", "machine" }

local function hf_token()
  local ok, token = pcall(runara.secret, "HF_TOKEN")
  if ok then return token end
  if not runara.simulated and scenario.where() ~= "endpoint" then
    runara.log("note: no HF_TOKEN secret (--secret HF_TOKEN); a gated model will fail to download")
  end
  return nil
end

scenario.run({
  about = "Llama-3.3-70B-Instruct FP8 with vLLM on one MI300X: single-stream throughput, TTFT, 10 and 32 concurrent\n" ..
          "requests, GPU power and VRAM; beside published MLPerf Inference v4.1 H100 measurements (other conditions, labelled).",
  -- Under --on URL, p.model is what the server serves and its quantization is not known.
  title = function(p, where)
    local name = tostring(p.model):match("[^/]+$")
    return name .. (scenario.where() ~= "endpoint" and (" " .. p.quantization:upper()) or "") .. " on " .. where
  end,
  reference = function(p) return p.model == "meta-llama/Llama-3.3-70B-Instruct" and "llama70b_fp8" or nil end,
  params = {
    { name = "size", default = "gpu-mi300x1-192gb", help = "droplet size", applies = { "droplet" } },
    defaults.image_param(),
    defaults.region_param(),
    { name = "model", default = "meta-llama/Llama-3.3-70B-Instruct", help = "Hugging Face model id" },
    { name = "quantization", default = "fp8", help = "vLLM --quantization", applies = VLLM_STARTED },
    { name = "max_model_len", type = "integer", default = 8192, min = 1, help = "vLLM --max-model-len", applies = VLLM_STARTED },
    { name = "gpu_memory_utilization", type = "number", default = 0.9, min = 0.05, max = 1, help = "vLLM --gpu-memory-utilization", applies = VLLM_STARTED },
    { name = "mode", default = "docker", choices = { "docker", "pip" }, help = "vLLM in its container, or pip-installed", applies = VLLM_STARTED },
    { name = "vllm_image", default_help = "the vendor's vLLM image", default = function() return nil end, help = "the vLLM container image", applies = VLLM_STARTED },
    { name = "ready_timeout", type = "number", default = 1800, min = 1, help = "seconds for the server to answer", applies = VLLM_STARTED },
    { name = "profile", choices = { "full", "quick" }, default = function() return runara.simulated and "quick" or "full" end,
      default_help = "full; quick on the simulated cloud", help = "the suite's full test sizes, or shortened ones" },
    { name = "remote", type = "boolean", default = true,
      help = "load from the machine itself (runara-agent): no network between you and the cloud in the figures", applies = VLLM_STARTED },
  },
}, function(sc)
  local P, rep = sc.params, sc.report
  local HF_TOKEN = hf_token()  -- asked for before anything is created
  rep:metadata{ model = P.model, quantization = scenario.where() ~= "endpoint" and P.quantization:upper() or nil,
                size = scenario.where() == "droplet" and P.size or nil }
  rep:phase("boot")
  local m = sc:machine{ name = "llama70b", size = P.size, image = P.image, region = P.region }
  rep:phase("model_load")
  local server = sc:serve(m, {
    model = P.model, quantization = P.quantization, mode = P.mode, image = P.vllm_image,
    max_model_len = P.max_model_len, gpu_memory_utilization = P.gpu_memory_utilization,
    hf_token = HF_TOKEN, ready_timeout = P.ready_timeout,
  })
  if not server.endpoint then rep:metadata{ framework = "vLLM " .. server.version, server_ready_s = server.ready_s } end

  suite.run(server, { report = rep, gpu = m and m.gpu, profile = P.profile, remote = P.remote })
  rep:phase("done")
  if not server.endpoint then
    server:download_log("logs/vllm.log")
    -- VRAM under vLLM is its up-front allocation: said so, with the KV cache it made of it.
    local kv = require("runara.vllm_kv_cache").parse(server:log_tail(5000))
    rep:metadata{ gpu_memory_utilization = P.gpu_memory_utilization, kv_cache = kv and kv.text or nil }
    rep:set("benchmarks.memory.vram_note", "allocated by vLLM up front (gpu_memory_utilization=" .. P.gpu_memory_utilization ..
      "), not the model's need")
    if kv then rep:set("benchmarks.memory.kv_cache", { gpu_blocks = kv.gpu_blocks, tokens = kv.tokens, source = "vLLM's log" }) end
  end
  if m and m.gpu then
    rep:add_gpu(m.gpu:stop())
    rep.gpu_sampler = nil
  end
  if not server.endpoint then server:stop() end
end)
