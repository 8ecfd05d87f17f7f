-- compare_mi300x_h100.lua — runara's serving suite (single stream, TTFT, 10 and 32 concurrent) on an AMD MI300X and an
-- NVIDIA H100 droplet at the same time, one comparison report.
--
-- What it measures: on each machine, vLLM serving the same model: single-stream throughput,
-- TTFT, 10 and 32 concurrent requests, GPU power and VRAM, vLLM's own /metrics (requests
-- running/waiting, KV cache); then the two side by side with the ratios MI300X / H100.
-- Writes results.json (machines, comparison, each machine's figures), report.md/report.html
-- (both machines in every table and chart, both costs), a folder per load per machine, each
-- machine's vLLM log in logs/. When one machine fails, the report says so and keeps the other's
-- results (PARTIAL; the run exits 1).
-- What it costs: gpu-mi300x1-192gb ($1.99/h) + gpu-h100x1-80gb ($3.39/h); about 45 minutes
-- with the model downloads (about $4). The worst case under the default 2 h limit is $10.76,
-- inside the default --budget of $20. Rehearse it for free: runara --sim scripts/compare_mi300x_h100.lua
--
-- Params: runara scripts/compare_mi300x_h100.lua --help
-- Secrets: --secret HF_TOKEN (gated model; not needed under --sim).
local scenario = require("runara.scenario")
local suite = require("runara.suite")

local P, rep, HF_TOKEN  -- set when the scenario starts
local SIDES

-- One side, start to finish, into its own view of the report (its loads, GPU samples, server
-- metrics, cost). An error ends this side only: it is kept as the side's failure, with what the
-- side measured before it. Returns true, or false and the error.
local function measure(sc, side)
  local view = rep:machine(side.key, { label = side.label })
  return view:run(function()
    view:metadata{ size = side.size, region = side.region }
    local m = sc:machine{ name = side.key, size = side.size, image = side.image, region = side.region, report = view }
    view:phase("model_load")
    local server = sc:serve(m, { model = P.model, quantization = P.quantization, hf_token = HF_TOKEN,
                                 max_model_len = P.max_model_len })
    view:metadata{ framework = "vLLM " .. tostring(server.version), server_ready_s = server.ready_s }
    local scraped, server_metrics = pcall(metrics.start, server.url .. "/metrics", { interval = 1, prefix = "vllm:" })
    suite.run(server, { report = view, gpu = view.gpu_sampler, profile = P.profile, quiet = true,
                        name_prefix = side.key .. "_", remote = P.remote })
    if scraped then view:add_server_metrics(server_metrics:stop()) end
    view:phase("done")
    view:add_gpu(view.gpu_sampler:stop())
    view.gpu_sampler = nil
    server:download_log("logs/vllm-" .. side.key .. ".log")
    server:stop()
  end)
end

scenario.run({
  about = "runara's serving suite (single stream, TTFT, 10 and 32 concurrent) on an MI300X and an H100\n" ..
          "droplet at the same time, one comparison report (a column per machine, one series per machine in every chart).",
  title = function(p) return "MI300X vs H100: " .. p.model .. " " .. p.quantization:upper() end,
  on = {}, on_refused = "it measures two droplets side by side; run scripts/llama70b_fp8.lua with --on on each machine instead",
  params = {
    { name = "model", default = "meta-llama/Llama-3.3-70B-Instruct", help = "Hugging Face model id" },
    { name = "quantization", default = "fp8", help = "vLLM --quantization" },
    { name = "max_model_len", type = "integer", default = 8192, min = 1, help = "vLLM --max-model-len" },
    { name = "profile", choices = { "full", "quick" }, default = function() return runara.simulated and "quick" or "full" end,
      default_help = "full; quick on the simulated cloud", help = "the suite's test sizes, or shortened ones" },
    { name = "remote", type = "boolean", default = true, help = "load from each machine itself (runara-agent)" },
    { name = "amd_size", default = "gpu-mi300x1-192gb", help = "the AMD droplet's size" },
    { name = "amd_image", default = "gpu-amd-base", help = "the AMD droplet's image" },
    { name = "amd_region", default = "atl1", help = "the AMD droplet's region" },
    { name = "nvidia_size", default = "gpu-h100x1-80gb", help = "the NVIDIA droplet's size" },
    { name = "nvidia_image", default = "gpu-h100x1-base", help = "the NVIDIA droplet's image" },
    { name = "nvidia_region", default = "nyc2", help = "the NVIDIA droplet's region" },
  },
}, function(sc)
  P, rep = sc.params, sc.report
  local hf_ok, token = pcall(runara.secret, "HF_TOKEN")  -- asked before anything is created
  HF_TOKEN = hf_ok and token or nil
  SIDES = {
    { key = "mi300x", label = "MI300X", size = P.amd_size, image = P.amd_image, region = P.amd_region },
    { key = "h100", label = "H100", size = P.nvidia_size, image = P.nvidia_image, region = P.nvidia_region },
  }
  rep:metadata{ model = P.model, quantization = P.quantization:upper() }
  local tasks = {}
  for i, side in ipairs(SIDES) do tasks[i] = runara.spawn(measure, sc, side) end
  local failed = {}
  for i, side in ipairs(SIDES) do
    local joined, ok, err = pcall(tasks[i].join, tasks[i])
    if not joined then rep:machine(side.key):fail(ok) end  -- the task itself was stopped
    if not joined or not ok then
      failed[#failed + 1] = side.label
      runara.log(side.label .. " failed: " .. tostring(joined and err or ok))
    end
  end
  if #failed > 0 then
    error(string.format("%d of %d machines failed: %s (each one's error is in the report)", #failed, #SIDES, table.concat(failed, ", ")), 0)
  end
end)
