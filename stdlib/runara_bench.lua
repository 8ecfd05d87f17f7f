-- The scenario behind `runara bench URL ...` (docs/cli.md#runara-bench): a load, a concurrency
-- sweep or a saturation search against an OpenAI-compatible server, with no script to write.
-- run(params) takes runara.params as the command line set them (strings).
local M = {}

local function number(params, key, default)
  local text = params[key]
  if text == nil or text == "" then return default end
  local value = tonumber(text)
  if not value then error(("runara bench: %s expects a number, got '%s'"):format(key, text), 0) end
  return value
end

local function list(text)
  local out = {}
  for item in tostring(text):gmatch("[^,]+") do
    local value = tonumber(item)
    if not value then error(("runara bench: -c expects numbers separated by commas, got '%s'"):format(text), 0) end
    out[#out + 1] = value
  end
  return out
end

-- results.json's benchmarks.loads: each finished load's figures (its numbers, by http_load's
-- names), kept as it finishes, so that the run history shows a headline (`runara runs`) and
-- `runara compare` compares bench runs on the loads they share, also after a Ctrl-C.
local loads = {}
local function keep(res)
  if type(res) ~= "table" then return res end
  if res[1] ~= nil then
    for _, r in ipairs(res) do keep(r) end
    return res
  end
  local figures = {}
  for k, v in pairs(res) do if type(v) == "number" then figures[k] = v end end
  loads[tostring(res.label or "bench")] = figures
  runara.result("benchmarks", { loads = loads })
  return res
end

local function base_options(params)
  local slo
  if params.slo_ttft_ms or params.slo_tpot_ms then
    slo = { ttft_ms = number(params, "slo_ttft_ms"), tpot_ms = number(params, "slo_tpot_ms") }
  end
  return {
    name = "bench", url = params.url, model = params.model,
    prompts = { input_tokens = number(params, "input_len", 1024), tokenizer = params.tokenizer },
    max_tokens = number(params, "output_len", 128), ignore_eos = true,
    requests = number(params, "requests"), duration = number(params, "duration"),
    slo = slo, seed = number(params, "seed", 0),
  }
end

-- Concurrency 1, 2, 4, ... until output throughput grows by less than 10 % over the best so
-- far, a point's SLO goodput falls below 90 % of its throughput, or 4096 streams (GuideLLM's
-- sweep, as a closed loop).
local function saturate(options)
  local best, best_c, c = 0, 0, 1
  print(("%-8s %10s %12s %10s %10s"):format("streams", "req/s", "out tok/s", "ttft p99", "goodput/s"))
  while c <= 4096 do
    options.concurrency, options.name, options.quiet = c, "bench-c" .. c, true
    local r = keep(http_load.run(options))
    print(("%-8d %10.2f %12.1f %10.2f %10s"):format(c, r.request_throughput, r.output_throughput, r.p99_ttft_ms,
      r.request_goodput and ("%.2f"):format(r.request_goodput) or "-"))
    local slo_broken = r.request_goodput and r.request_goodput < 0.9 * r.request_throughput
    if r.output_throughput < best * 1.1 or slo_broken then
      print(("saturated: %d streams gave %.1f tok/s; the best was %.1f tok/s at %d streams%s"):format(
        c, r.output_throughput, best, best_c, slo_broken and " (the SLO broke)" or ""))
      runara.result("saturation", { best_concurrency = best_c, best_output_throughput = best })
      return
    end
    best, best_c, c = r.output_throughput, c, c * 2
  end
  runara.result("saturation", { best_concurrency = best_c, best_output_throughput = best })
end

function M.run(params)
  local options = base_options(params)
  if options.requests == nil and options.duration == nil then options.duration = 60 end
  if params.saturate then return saturate(options) end
  if params.rate then
    options.rate = list(params.rate)
    if #options.rate == 1 then options.rate = options.rate[1] end
  else
    options.concurrency = list(params.concurrency or "1")
    if #options.concurrency == 1 then options.concurrency = options.concurrency[1] end
  end
  keep(http_load.run(options))
end

return M
