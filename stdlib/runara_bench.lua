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

local function list(text, flag)
  local out = {}
  for item in tostring(text):gmatch("[^,]+") do
    local value = tonumber(item)
    if not value then error(("runara bench: %s expects numbers separated by commas, got '%s'"):format(flag or "-c", text), 0) end
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

local function words(text)
  local out = {}
  for item in tostring(text):gmatch("[^,]+") do out[#out + 1] = item end
  return out
end

-- vLLM's --goodput ttft:500,tpot:50 as http_load's slo; --slo-ttft-ms/--slo-tpot-ms as well.
local function slo_of(params)
  local slo = {}
  for item in tostring(params.goodput or ""):gmatch("[^,]+") do
    local key, ms = item:match("^(%a+):(.+)$")
    slo[key .. "_ms"] = tonumber(ms)
  end
  slo.ttft_ms = slo.ttft_ms or number(params, "slo_ttft_ms")
  slo.tpot_ms = slo.tpot_ms or number(params, "slo_tpot_ms")
  return next(slo) and slo or nil
end

-- Synthetic prompts (vLLM's "random" dataset, or its "prefix_repetition": K shared prefixes of P
-- tokens, each prompt one of them plus S tokens of its own), or a file: sharegpt, or custom (JSON lines).
local function prompts_of(params)
  local formats = { sharegpt = "sharegpt", custom = "jsonl" }
  if params.dataset_path then
    return { file = params.dataset_path, format = formats[params.dataset_name or ""], tokenizer = params.tokenizer }
  end
  if params.dataset_name == "prefix_repetition" then
    local prefix, suffix = number(params, "prefix_len", 256), number(params, "suffix_len", 256)
    return { input_tokens = prefix + suffix, prefix_tokens = prefix, prefixes = number(params, "num_prefixes", 10),
             tokenizer = params.tokenizer }
  end
  return { input_tokens = number(params, "input_len", 1024), range_ratio = number(params, "range_ratio"),
           tokenizer = params.tokenizer }
end

-- As vLLM: ShareGPT prompts are sent with their reply's length (http_load's max_tokens left
-- unset) unless --sharegpt-output-len fixes one; other prompts with --output-len (128).
local function max_tokens_of(params)
  if params.dataset_name == "sharegpt" then return number(params, "sharegpt_output_len") end
  return number(params, "output_len", 128)
end

local function base_options(params)
  return {
    name = params.label or "bench", url = params.url, model = params.model, endpoint = params.endpoint,
    prompts = prompts_of(params),
    max_tokens = max_tokens_of(params), ignore_eos = params.ignore_eos and true or nil,  -- as vLLM: only with --ignore-eos
    temperature = number(params, "temperature"),
    requests = number(params, "requests"), duration = number(params, "duration"),
    warmup = number(params, "warmup"), burstiness = number(params, "burstiness"),
    api_key = params.api_key and runara.secret(params.api_key) or nil,
    percentiles = params.metric_percentiles and list(params.metric_percentiles, "--metric-percentiles") or nil,
    summary_metrics = params.percentile_metrics and words(params.percentile_metrics) or nil,
    slo = slo_of(params), seed = number(params, "seed", 0),
    save_detailed = params.save_detailed and true or nil,
  }
end

-- Concurrency 1, 2, 4, ... until output throughput grows by less than 10 % over the best so
-- far, a point's SLO goodput falls below 90 % of its throughput, or 4096 streams (GuideLLM's
-- sweep, as a closed loop). A point that never had its streams in flight (fewer requests than
-- streams) says nothing about saturation: the search stops there and says so.
local function saturate(options)
  local best, best_c, c, base = 0, 0, 1, options.name
  local function done(note)
    runara.result("saturation", { best_concurrency = best_c, best_output_throughput = best, note = note })
  end
  print(("%-8s %10s %12s %10s %10s"):format("streams", "req/s", "out tok/s", "ttft p99", "goodput/s"))
  while c <= 4096 do
    options.concurrency, options.name, options.quiet = c, base .. "-c" .. c, true
    local r = keep(http_load.run(options))
    print(("%-8d %10.2f %12.1f %10.2f %10s"):format(c, r.request_throughput, r.output_throughput, r.p99_ttft_ms,
      r.request_goodput and ("%.2f"):format(r.request_goodput) or "-"))
    if (r.max_concurrent_requests or c) < c then
      local note = ("not saturated: at %d streams at most %d requests were ever in flight (%d requests per point); " ..
        "give more requests (-n) or a duration (-d) to search further"):format(c, r.max_concurrent_requests, r.num_prompts)
      print(note .. (". The best so far was %.1f tok/s at %d streams"):format(best, best_c))
      return done(note)
    end
    local slo_broken = r.request_goodput and r.request_goodput < 0.9 * r.request_throughput
    if r.output_throughput < best * 1.1 or slo_broken then
      print(("saturated: %d streams gave %.1f tok/s; the best was %.1f tok/s at %d streams%s"):format(
        c, r.output_throughput, best, best_c, slo_broken and " (the SLO broke)" or ""))
      return done()
    end
    best, best_c, c = r.output_throughput, c, c * 2
  end
  done()
end

-- --model, or as `vllm bench serve` does without it: the first model the server lists.
local function model_of(params)
  if params.model then return params.model end
  local ids, why = require("runara.served_models").ids(params.url)
  if not ids then error("runara bench: no --model given, and " .. why .. ": give --model", 0) end
  print(("runara bench: --model not given; the server serves %s"):format(ids[1]))
  return ids[1]
end

-- vLLM's --metadata KEY=VALUE ...: written, as vLLM writes them, at the top level of each load's
-- results.json (http_load's `metadata`, which refuses a key runara writes itself), and kept in
-- the run's results.json as `bench_metadata`, for the record. Not under `metadata`, the run's own
-- facts: `runara compare` reads metadata.framework (the engine) for its workload check, which
-- --metadata framework=X must not change.
local function metadata_of(params)
  if not params.metadata then return nil end
  local metadata = {}
  for item in tostring(params.metadata):gmatch("[^,]+") do
    local key, value = item:match("^([^=]+)=(.*)$")
    if not key then error(("runara bench: --metadata takes KEY=VALUE items, got '%s'"):format(item), 0) end
    metadata[key] = value
  end
  runara.result("bench_metadata", metadata)
  return metadata
end

function M.run(params)
  params.model = model_of(params)
  local metadata = metadata_of(params)
  local options = base_options(params)
  options.metadata = metadata
  if options.requests == nil and options.duration == nil then options.duration = 60 end
  if params.saturate then return saturate(options) end
  local rate = params.rate and list(params.rate, "--rate")
  if params.ramp_strategy then
    options.ramp = { strategy = params.ramp_strategy, start_rate = number(params, "ramp_start"), end_rate = number(params, "ramp_end") }
    options.max_concurrency = params.max_concurrency and list(params.max_concurrency, "--max-concurrency")[1]
  elseif rate then
    options.rate = #rate == 1 and rate[1] or rate
    options.max_concurrency = params.max_concurrency and list(params.max_concurrency, "--max-concurrency")[1]
  else
    -- -c, or vLLM's --max-concurrency with no --request-rate (inf): a closed loop of that many streams.
    local streams = list(params.concurrency or params.max_concurrency or "1")
    options.concurrency = #streams == 1 and streams[1] or streams
  end
  keep(http_load.run(options))
end

return M
