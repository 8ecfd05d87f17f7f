-- serving_replicas.lua — the serving architecture of Dell and Metrum AI's MI300X study (PowerEdge XE9680, August 2024) on one 8-GPU droplet: N vLLM replicas,
-- each on GPUs of its own (tensor_parallel_size = GPUs / N, ports 8001 … 8000+N), behind an
-- nginx load balancer on port 9080 (round-robin), the sweep sent to the balancer over a pool of
-- varied prompts (the "prompt randomizer"), every replica's /metrics sampled; for N = 1, 2, 4, 8,
-- then one server with tensor_parallel_size = 8 on the same machine, without a balancer, in the
-- same report.
--
-- What it measures: per configuration and concurrency level, output and total token throughput,
-- TTFT/TPOT percentiles, failures; each replica's share of the requests (vllm:request_success_total
-- on its /metrics) and its running requests; GPU power and VRAM through the whole run, each
-- configuration a phase. Writes results.json (benchmarks.replicas), report.md and report.html (a
-- series per configuration in every chart against concurrency, the comparison and request-share
-- tables), a sweep CSV/JSON per configuration, every replica's log in logs/. Ctrl-C or a failure
-- still writes a PARTIAL report with the configurations measured so far.
--
-- What it costs: gpu-mi300x8-1536gb at $15.92/h; five configurations of a 70B model, each loaded
-- afresh (about 5-10 minutes each) and swept: about 1.5-2 h with the model download (about
-- $25-35): run it with --budget 40 --max-runtime 3h. On an H100x8 droplet (80 GB per GPU) use quantization=fp8 for 70B at 8 x TP1.
-- Rehearse it for free with: runara --sim scripts/serving_replicas.lua
-- Elsewhere: --on root@HOST (a machine of yours with 8 GPUs; not --on URL: it starts servers).
-- Params: runara scripts/serving_replicas.lua --help
-- Secrets: --secret HF_TOKEN (gated model; not needed under --sim).
local scenario = require("runara.scenario")
local defaults = require("runara.droplet_defaults")
local suite = require("runara.suite")
local replicas = require("runara.replicas")

-- That study's levels and lengths (Apache Bench at 64 … 2048 concurrent requests, prompts of 32
-- tokens on average, at most 256 generated), and a shortened profile for rehearsals.
local PROFILES = {
  full = { levels = { 64, 128, 512, 1024, 2048 }, max_tokens = 256, requests_per_stream = 2 },
  quick = { levels = { 16, 64 }, max_tokens = 64, requests_per_stream = 1 },
}

local function hf_token()
  local ok, token = pcall(runara.secret, "HF_TOKEN")
  if ok then return token end
  if not runara.simulated then runara.log("note: no HF_TOKEN secret (--secret HF_TOKEN); a gated model will fail to download") end
  return nil
end

-- The GPU count a DigitalOcean size slug names (gpu-mi300x8-1536gb → 8), or nil.
local function size_gpus(size)
  return tonumber(tostring(size):match("^gpu%-[%a%d]-x(%d+)%-"))
end

local function fmt(v, pattern)
  return type(v) == "number" and v == v and string.format(pattern or "%.1f", v) or "—"
end

scenario.run({
  about = "The serving architecture of Dell and Metrum AI's MI300X study (PowerEdge XE9680, August 2024):\n" ..
          "N vLLM replicas on one 8-GPU machine, each on GPUs of its own, behind an nginx load balancer (round-robin, port 9080), swept over a prompt pool with every\n" ..
          "replica's /metrics sampled; for each N, then one tensor-parallel server on all GPUs, one report.",
  title = function(p, where) return "vLLM replicas behind nginx: " .. p.model .. " on " .. where end,
  needs_machine = true,
  params = {
    { name = "size", default = "gpu-mi300x8-1536gb", help = "droplet size (8 GPUs)" },
    defaults.image_param(),
    defaults.region_param(),
    { name = "model", default = "meta-llama/Llama-3.1-70B-Instruct", help = "Hugging Face model id" },
    { name = "quantization", default = "none", help = "vLLM --quantization (none: the model's own precision, FP16 in that study)" },
    { name = "max_model_len", type = "integer", default = 8192, min = 1, help = "vLLM --max-model-len" },
    { name = "replicas", type = "integers", min = 1, default = { 1, 2, 4, 8 }, help = "replica counts, one configuration each" },
    { name = "single", type = "boolean", default = true, help = "also one server on all GPUs (tensor parallel), without a balancer" },
    { name = "profile", choices = { "full", "quick" }, default = function() return runara.simulated and "quick" or "full" end,
      default_help = "full; quick on the simulated cloud", help = "that study's levels and lengths, or shortened ones" },
    { name = "levels", type = "integers", min = 1, default = function() return nil end,
      default_help = "64,128,512,1024,2048; 16,64 in the quick profile", help = "concurrency levels" },
    { name = "input_tokens", type = "integer", default = 32, min = 1, help = "mean prompt length in tokens (that study's 32)" },
    { name = "range_ratio", type = "number", default = 0.5, min = 0, max = 0.99, help = "prompt lengths vary by ± this fraction" },
    { name = "max_tokens", type = "integer", min = 1, default = function() return nil end,
      default_help = "256; 64 in the quick profile", help = "tokens generated per request" },
    { name = "requests_per_stream", type = "integer", min = 1, default = function() return nil end,
      default_help = "2; 1 in the quick profile", help = "requests per level = this x the level" },
    { name = "balancer", default = "docker", choices = { "docker", "host" }, help = "nginx from its official image, or the machine's own" },
    { name = "ready_timeout", type = "number", default = 1800, min = 1, help = "seconds for each server to answer" },
    { name = "remote", type = "boolean", default = true, help = "load from the machine itself (runara-agent)" },
  },
}, function(sc)
  local P, rep = sc.params, sc.report
  local profile = PROFILES[P.profile]
  local levels = P.levels or profile.levels
  -- Every replica count against the size's GPUs before anything is created (a droplet's size names them).
  local gpus = scenario.where() == "droplet" and size_gpus(P.size) or nil
  local vllm_options = { model = P.model, quantization = P.quantization ~= "none" and P.quantization or nil,
    max_model_len = P.max_model_len, ready_timeout = P.ready_timeout }
  local function check_counts(n_gpus)
    for _, n in ipairs(P.replicas) do
      local o = { count = n, gpus = n_gpus, balancer = P.balancer }
      for k, v in pairs(vllm_options) do o[k] = v end
      local bad = replicas.check_options(o)
      if bad then runara.usage_error("param replicas=" .. table.concat(P.replicas, ",") .. ": " .. bad:gsub("^replicas%.start: ", "")) end
    end
  end
  if gpus then check_counts(gpus) end
  -- The quick profile is a rehearsal: 45 minutes bound it, and so its worst-case cost under the
  -- default --budget ($20: an 8-GPU droplet's 2 default hours would exceed it, an H100x8's 1 hour too).
  if P.profile == "quick" then watchdog.limit(2700) end
  local HF_TOKEN = hf_token()
  vllm_options.hf_token = HF_TOKEN
  rep:metadata{ model = P.model, quantization = vllm_options.quantization and vllm_options.quantization:upper() or nil,
                size = scenario.where() == "droplet" and P.size or nil }
  rep:set("benchmarks.suite_profile", P.profile)
  rep:phase("boot")
  local m = sc:machine{ name = "replicas", size = P.size, image = P.image, region = P.region }
  gpus = m.info.gpu_count or gpus
  if not gpus then error("the machine's GPU count is unknown (no GPU tool answered); replicas need it", 0) end
  check_counts(gpus)

  local sweep = { concurrency = levels, remote = P.remote, input_tokens = P.input_tokens, range_ratio = P.range_ratio,
    max_tokens = P.max_tokens or profile.max_tokens, requests_per_stream = P.requests_per_stream or profile.requests_per_stream,
    gpu = m.gpu, quiet = true }
  local configurations, comparison_rows, share_rows = {}, {}, {}

  -- One configuration's sweep into its own view of the report (a series per configuration).
  local function measure(key, label, server)
    -- The same machine for every configuration: its price gives each one's cost per token.
    local i = m.info
    local view = rep:machine(key, { label = label, gpu = i.gpu, gpu_count = gpus, size = m.droplet and m.droplet.size,
      region = m.droplet and m.droplet.region, hourly_usd = m.droplet and m.droplet.price_hourly,
      driver_version = i.driver_version, rocm_version = i.rocm_version, cuda_version = i.cuda_version,
      framework = "vLLM " .. tostring(server.version) .. (server.servers and " + nginx" or "") })
    local o = { report = view, name_prefix = key .. "_" }
    for k, v in pairs(sweep) do o[k] = v end
    local results = suite.sweep(server, o)
    local rows = {}
    for i, r in ipairs(results) do
      rows[i] = { concurrency = levels[i], output_throughput = r.output_throughput, total_token_throughput = r.total_token_throughput,
        median_ttft_ms = r.median_ttft_ms, p99_ttft_ms = r.p99_ttft_ms, median_tpot_ms = r.median_tpot_ms,
        p99_tpot_ms = r.p99_tpot_ms, completed = r.completed, failed = r.failed }
      comparison_rows[#comparison_rows + 1] = { label, levels[i], fmt(r.output_throughput, "%.0f"), fmt(r.total_token_throughput, "%.0f"),
        fmt(r.median_ttft_ms), fmt(r.p99_ttft_ms), fmt(r.median_tpot_ms, "%.2f"), fmt(r.p99_tpot_ms, "%.2f"),
        string.format("%s / %s", fmt(r.completed, "%d"), fmt(r.failed, "%d")) }
    end
    return view, rows
  end

  for _, n in ipairs(P.replicas) do
    local tp = gpus / n
    local key = "r" .. n
    local label = string.format("%d x TP%d", n, tp)  -- behind nginx
    rep:phase(key .. " load")
    local o = { count = n, gpus = gpus, balancer = P.balancer }
    for k, v in pairs(vllm_options) do o[k] = v end
    local group = sc:serve_replicas(m, o)
    if not rep.meta.framework then rep:metadata{ framework = "vLLM " .. group.version } end
    group:start_metrics()
    rep:phase(key .. " sweep")
    local view, rows = measure(key, label, group)
    local share = group:request_share()
    local sampled = group:stop_metrics()
    local per_replica = {}
    for i, s in ipairs(share) do
      local running = sampled[i] and sampled[i].summary and sampled[i].summary.metrics and
        sampled[i].summary.metrics["vllm:num_requests_running"] or {}
      per_replica[i] = { replica = i, port = s.port, gpus = s.devices, requests = s.requests, share = s.share,
        running_mean = running.mean, running_max = running.max, error = s.error }
      share_rows[#share_rows + 1] = { label, i, s.port, s.devices, fmt(s.requests, "%d"),
        s.share and string.format("%.1f %%", s.share * 100) or "—", fmt(running.mean), fmt(running.max, "%d") }
    end
    view:set("replicas", per_replica)
    configurations[#configurations + 1] = { key = key, label = label, replicas = n, tensor_parallel_size = tp,
      balancer = "nginx round-robin on port " .. group.port, ports = { first = group.plan[1].port, last = group.plan[#group.plan].port },
      sweep = rows, request_share = per_replica }
    rep:set("benchmarks.replicas", { gpus = gpus, configurations = configurations })
    group:download_logs("logs/" .. key)
    group:stop()
  end

  if P.single then
    local key = "tp" .. gpus
    local label = string.format("TP%d direct", gpus)  -- one server, no balancer
    rep:phase(key .. " load")
    local o = { tensor_parallel_size = gpus > 1 and gpus or nil }
    for k, v in pairs(vllm_options) do o[k] = v end
    local server = sc:serve(m, o)
    if not rep.meta.framework then rep:metadata{ framework = "vLLM " .. server.version } end
    local vm = metrics.start(server.url .. "/metrics", { interval = 1, prefix = "vllm:" })
    rep:phase(key .. " sweep")
    local view, rows = measure(key, label, server)
    view:add_server_metrics(vm:stop())
    configurations[#configurations + 1] = { key = key, label = label, replicas = 1, tensor_parallel_size = gpus,
      balancer = "none", sweep = rows }
    rep:set("benchmarks.replicas", { gpus = gpus, configurations = configurations })
    server:download_log("logs/" .. key .. "/vllm.log")
    server:stop()
  end
  rep:phase("done")

  rep:add_table("Replicas behind nginx against one server", {
    columns = { "configuration", "concurrency", "output tok/s", "total tok/s", "TTFT p50 (ms)", "TTFT p99 (ms)",
      "TPOT p50 (ms)", "TPOT p99 (ms)", "completed / failed" },
    rows = comparison_rows,
    caption = "Each configuration on the same " .. gpus .. " GPUs: N x TPk is N replicas of tensor_parallel_size k behind " ..
      "nginx (round-robin, port 9080); TP" .. gpus .. " direct is one server on all of them, the load sent to it without a balancer.",
  })
  rep:add_table("Request share per replica", {
    columns = { "configuration", "replica", "port", "GPUs", "requests", "share", "running (mean)", "running (max)" },
    rows = share_rows,
    caption = "Requests each replica finished (vllm:request_success_total on its /metrics) over its configuration's " ..
      "whole sweep; running requests sampled every second.",
  })
  if m.gpu then
    rep:add_gpu(m.gpu:stop())
    rep.gpu_sampler = nil
  end
end)
