-- compare_mi300x_h100.lua — the Runara plan's serving suite (seed 000) on an AMD MI300X and an
-- NVIDIA H100 droplet at the same time, one comparison report.
--
-- What it measures: on each machine, vLLM serving the same model: single-stream throughput,
-- TTFT, 10 and 32 concurrent requests, GPU power and VRAM; then the ratios MI300X / H100.
-- Writes results.json, report.md/report.html (side by side), a folder per load per machine.
-- What it costs: gpu-mi300x1-192gb ($1.99/h) + gpu-h100x1-80gb ($3.39/h); about 45 minutes
-- with the model downloads (about $4). The worst case under the default 2 h limit is $10.76,
-- inside the default --budget of $20. Rehearse it for free: runara --sim scripts/compare_mi300x_h100.lua
--
-- Params: model=meta-llama/Llama-3.3-70B-Instruct quantization=fp8 profile=full|quick remote=false
--   amd_size=gpu-mi300x1-192gb amd_image=gpu-amd-base amd_region=atl1
--   nvidia_size=gpu-h100x1-80gb nvidia_image=gpu-h100x1-base nvidia_region=nyc2
-- Secrets: --secret HF_TOKEN (gated model; not needed under --sim).
local report = require("runara.report")
local vllm = require("runara.vllm")
local suite = require("runara.suite")
local machine = require("runara.machine")

local P = runara.params
local model = P.model or "meta-llama/Llama-3.3-70B-Instruct"
local quantization = P.quantization or "fp8"
local SIDES = {
  { key = "mi300x", label = "MI300X", size = P.amd_size or "gpu-mi300x1-192gb", image = P.amd_image or "gpu-amd-base", region = P.amd_region or "atl1" },
  { key = "h100", label = "H100", size = P.nvidia_size or "gpu-h100x1-80gb", image = P.nvidia_image or "gpu-h100x1-base", region = P.nvidia_region or "nyc2" },
}

local hf_ok, HF_TOKEN = pcall(runara.secret, "HF_TOKEN")  -- asked before anything is created
if not hf_ok then HF_TOKEN = nil end

local rep = report.new{ title = "MI300X vs H100: " .. model .. " " .. quantization:upper(), simulated = runara.simulated }
rep:metadata{ model = model, quantization = quantization:upper() }

-- One machine, start to finish; returns what the comparison needs.
local function measure(side)
  local d = droplet.create{ name = side.key, size = side.size, image = side.image, region = side.region }
  local s = ssh.connect(d, { wait_cloud_init = true })
  local info = machine.describe(s)
  local gpu = gpu_metrics.start(s, { interval = 1 })
  local server = vllm.start(s, { model = model, quantization = quantization, hf_token = HF_TOKEN,
                                 max_model_len = tonumber(P.max_model_len or 8192) })
  local r = suite.run(server, { gpu = gpu, profile = P.profile, quiet = true, name_prefix = side.key .. "_",
                                    remote = P.remote ~= "false" })
  server:download_log("logs/vllm-" .. side.key .. ".log")
  local g = gpu:stop()
  server:stop()
  return { info = info, suite = r, gpu = g, version = server.version, cost = d:cost(), machine = d.name }
end

local function peak_power(g)
  local w
  for _, x in ipairs(g.summary and g.summary.gpus or {}) do w = math.max(w or 0, x.max_power_w or 0) end
  return w
end

local function figures(m)
  local c32 = m.suite.concurrent[#m.suite.concurrent]
  return {
    { "single-stream throughput (tok/s)", m.suite.throughput and m.suite.throughput.output_throughput },
    { "TTFT median (ms)", m.suite.latency and m.suite.latency.median_ttft_ms },
    { "32 concurrent throughput (tok/s)", c32 and c32.output_throughput },
    { "ITL median at 32 (ms)", c32 and c32.median_itl_ms },
    { "peak VRAM (GB)", m.gpu.summary and m.gpu.summary.peak_vram_bytes and m.gpu.summary.peak_vram_bytes / 1e9 },
    { "peak power (W)", peak_power(m.gpu) },
    { "output tokens per joule at 32", c32 and c32.output_tokens_per_joule },
  }
end

local tasks, measured, failures = {}, {}, {}
for _, side in ipairs(SIDES) do
  tasks[#tasks + 1] = runara.spawn(function() return measure(side) end)
end
for i, side in ipairs(SIDES) do
  local ok, m = pcall(tasks[i].join, tasks[i])
  if ok then measured[side.key] = m else failures[#failures + 1] = side.label .. ": " .. tostring(m) end
end

local a, b = measured.mi300x, measured.h100
local rows = {}
local fa, fb = a and figures(a), b and figures(b)
for i = 1, 7 do
  local name = (fa or fb)[i][1]
  local x, y = fa and fa[i][2], fb and fb[i][2]
  rows[#rows + 1] = { name, x and string.format("%.1f", x) or "not measured", y and string.format("%.1f", y) or "not measured",
                      x and y and y ~= 0 and string.format("%.2f", x / y) or "—" }
end
rep:add_table("MI300X vs H100", { columns = { "metric", "MI300X", "H100", "MI300X / H100" }, rows = rows,
  caption = "Same model, same suite, same client, run at the same time on both machines." })
for _, side in ipairs(SIDES) do
  local m = measured[side.key]
  if m then
    rep:set("machines." .. side.key, { gpu = m.info.gpu, gpu_count = m.info.gpu_count, driver_version = m.info.driver_version,
      rocm_version = m.info.rocm_version, cuda_version = m.info.cuda_version, framework = "vLLM " .. m.version,
      size = side.size, region = side.region, cost_usd = m.cost, machine = m.machine })
    if m.suite.throughput then rep:add_load(side.label .. " throughput", m.suite.throughput, { kind = "load", concurrency = 1 }) end
    for _, c in ipairs(m.suite.concurrent) do rep:add_load(side.label .. " c=" .. c.max_concurrency, c, { kind = "load" }) end
  end
end
if #failures > 0 then rep:fail(table.concat(failures, "\n")) end
local paths = rep:write()
print("\nreport: " .. paths.html)
if #failures > 0 then error(table.concat(failures, "\n"), 0) end
