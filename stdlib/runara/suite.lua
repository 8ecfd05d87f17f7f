-- runara.suite: runara's serving tests (single-stream throughput
-- with a long generation, TTFT on a short prompt, 10 and 32 concurrent requests) and the
-- concurrency sweep of Dell and Metrum AI's MI300X study (PowerEdge XE9680, August 2024: 64 … 2048
-- streams over a prompt pool).
--
--   local suite = require("runara.suite")
--   suite.run(server, { report = rep, gpu = sampler })
--   suite.sweep(server, { concurrency = { 64, 128, 256 }, report = rep, gpu = sampler })
--
-- Every test is an http_load.run against the server's URL; its result also goes to the report
-- (runara.report) when one is given. See docs/stdlib.md#runarasuite.
local M = {}

-- The suite's test parameters ("full"), and a shortened profile for rehearsals on the simulated
-- cloud, where generation happens in real time ("quick"; the report says which one ran).
M.profiles = {
  -- warmup: requests sent first and not measured (vLLM's --num-warmups); repeats: the load run
  -- that many times, its figures the median with a confidence interval (runara.repeats). Where
  -- they cost little: the short-prompt latency test and the concurrent ones (seconds each); the
  -- 2048-token generation runs once.
  full = {
    throughput = { concurrency = 1, requests = 3, input_tokens = 256, max_tokens = 2048, warmup = 1 },
    latency = { concurrency = 1, requests = 10, input_tokens = 32, max_tokens = 16, warmup = 2, repeats = 3 },
    concurrent = {
      { concurrency = 10, requests = 30, input_tokens = 256, max_tokens = 512, warmup = 10, repeats = 3 },
      { concurrency = 32, requests = 96, input_tokens = 256, max_tokens = 512, warmup = 32, repeats = 3 },
    },
  },
  quick = {
    throughput = { concurrency = 1, requests = 2, input_tokens = 256, max_tokens = 256 },
    latency = { concurrency = 1, requests = 5, input_tokens = 32, max_tokens = 16, warmup = 1, repeats = 3 },
    concurrent = {
      { concurrency = 10, requests = 20, input_tokens = 256, max_tokens = 128 },
      { concurrency = 32, requests = 64, input_tokens = 256, max_tokens = 128 },
    },
  },
}

local errors = require("runara.errors")
local repeats = require("runara.repeats")

-- The tests of suite.run, in the order they run.
M.tests = { "throughput", "latency", "concurrent" }

local COMMON = { report = true, gpu = true, quiet = true, seed = true, remote = true, name_prefix = true, repeats = true,
  thresholds = true }
local RUN_OPTIONS = { profile = true, tests = true }
local SWEEP_OPTIONS = { concurrency = true, requests_per_stream = true, input_tokens = true, range_ratio = true,
  max_tokens = true }
for k in pairs(COMMON) do RUN_OPTIONS[k] = true; SWEEP_OPTIONS[k] = true end

M.sweep_defaults = { concurrency = { 64, 128, 256, 512, 1024, 2048 }, requests_per_stream = 2, input_tokens = 1024,
  range_ratio = 0.5, max_tokens = 256 }

-- The checks below return a message (nil when all is well); the public function raises it with
-- level 2, so the error points at the user's line, not into this file.
local function server_problem(server)
  if type(server) ~= "table" or type(server.url) ~= "string" or type(server.model) ~= "string" then
    return "argument 'server' must be a server from vllm.start (or a table with url and model)"
  end
end

local function common_problem(opts, known)
  if type(opts) ~= "table" then return "options must be a table, got " .. type(opts) end
  local unknown = errors.unknown_option(opts, known)
  if unknown then return unknown end
  if opts.name_prefix ~= nil and type(opts.name_prefix) ~= "string" then
    return "option 'name_prefix' must be a string, got " .. errors.show(opts.name_prefix)
  end
  if opts.report ~= nil and (type(opts.report) ~= "table" or type(opts.report.add_load) ~= "function") then
    return "option 'report' must be a report from runara.report's new, got " .. errors.show(opts.report)
  end
  for _, k in ipairs({ "quiet", "remote" }) do
    if opts[k] ~= nil and type(opts[k]) ~= "boolean" then
      return string.format("option '%s' must be true or false, got %s", k, errors.show(opts[k]))
    end
  end
  if opts.thresholds ~= nil and type(opts.thresholds) ~= "table" then
    return "option 'thresholds' must be a table such as { ttft_p99_ms = 500 }, got " .. errors.show(opts.thresholds)
  end
  if opts.seed ~= nil and type(opts.seed) ~= "number" then
    return "option 'seed' must be a number, got " .. errors.show(opts.seed)
  end
  if opts.repeats ~= nil and not (errors.whole(opts.repeats) and opts.repeats <= 20) then
    return "option 'repeats' must be a whole number from 1 to 20, got " .. errors.show(opts.repeats)
  end
end

-- suite.run's loads: the list, and the profile's name; or nil and a message.
local function run_plan(opts)
  if opts == nil then opts = {} end
  local problem = common_problem(opts, RUN_OPTIONS)
  if problem then return nil, problem end
  local profile_name = opts.profile or (runara.simulated and "quick" or "full")
  local p = M.profiles[profile_name]
  if not p then return nil, "option 'profile' must be \"full\" or \"quick\", got " .. errors.show(profile_name) end
  local wanted = {}
  if opts.tests ~= nil then
    if type(opts.tests) ~= "table" or #opts.tests == 0 then
      return nil, "option 'tests' must be a list of \"throughput\", \"latency\", \"concurrent\", got " .. errors.show(opts.tests)
    end
    for _, name in ipairs(opts.tests) do
      if name ~= "throughput" and name ~= "latency" and name ~= "concurrent" then
        local guess = errors.suggest(name, M.tests)
        return nil, "option 'tests': unknown test " .. errors.show(name) ..
          (guess and " (did you mean \"" .. guess .. "\"?)" or " (tests: \"throughput\", \"latency\", \"concurrent\")")
      end
      wanted[name] = true
    end
  else
    for _, name in ipairs(M.tests) do wanted[name] = true end
  end
  local prefix = opts.name_prefix or ""
  local loads = {}
  local function add(test, name, kind, t, extra)
    local l = { test = test, name = name, load_name = prefix .. name, phase = name, kind = kind,
      concurrency = t.concurrency, requests = t.requests, input_tokens = t.input_tokens, max_tokens = t.max_tokens,
      range_ratio = t.range_ratio, warmup = t.warmup, repeats = opts.repeats or t.repeats or 1 }
    for k, v in pairs(extra or {}) do l[k] = v end
    loads[#loads + 1] = l
  end
  if wanted.throughput then add("throughput", "throughput", "throughput", p.throughput) end
  if wanted.latency then add("latency", "ttft", "latency", p.latency) end
  if wanted.concurrent then
    for _, t in ipairs(p.concurrent) do add("concurrent", "concurrent_" .. t.concurrency, "concurrent", t) end
  end
  return loads, profile_name
end

-- suite.sweep's loads, or nil and a message.
local function sweep_plan(opts)
  if opts == nil then opts = {} end
  local problem = common_problem(opts, SWEEP_OPTIONS)
  if problem then return nil, problem end
  local d = M.sweep_defaults
  local levels = opts.concurrency or d.concurrency
  if type(levels) ~= "table" or #levels == 0 then
    return nil, "option 'concurrency' must be a list of whole numbers >= 1, got " .. errors.show(levels)
  end
  for i, c in ipairs(levels) do
    if not errors.whole(c) then
      return nil, string.format("option 'concurrency' must be a list of whole numbers >= 1; item %d is %s", i, errors.show(c))
    end
  end
  for _, k in ipairs({ "requests_per_stream", "input_tokens", "max_tokens" }) do
    if opts[k] ~= nil and not errors.whole(opts[k]) then
      return nil, string.format("option '%s' must be a whole number >= 1, got %s", k, errors.show(opts[k]))
    end
  end
  local rr = opts.range_ratio
  if rr ~= nil and not (type(rr) == "number" and rr >= 0 and rr < 1) then
    return nil, "option 'range_ratio' must be a number from 0 to below 1, got " .. errors.show(rr)
  end
  local prefix = opts.name_prefix or ""
  local loads = {}
  for _, c in ipairs(levels) do
    loads[#loads + 1] = { test = "sweep", name = "sweep-c" .. c, load_name = prefix .. "sweep-c" .. c, phase = "c=" .. c,
      kind = "sweep", concurrency = c, requests = c * (opts.requests_per_stream or d.requests_per_stream),
      input_tokens = opts.input_tokens or d.input_tokens, range_ratio = rr or d.range_ratio,
      max_tokens = opts.max_tokens or d.max_tokens, repeats = opts.repeats or 1 }
  end
  return loads
end

-- The loads suite.run(server, opts) would run, in order, without running them: a list of
-- { test, name, load_name, phase, kind, concurrency, requests, input_tokens, max_tokens }, and the
-- profile's name. Raises suite.run's option errors (as "suite.plan: ...").
function M.plan(opts)
  local loads, profile = run_plan(opts)
  if not loads then error("suite.plan: " .. profile, 2) end
  return loads, profile
end

-- The loads suite.sweep(server, opts) would run (test = "sweep"), without running them.
function M.sweep_plan(opts)
  local loads, problem = sweep_plan(opts)
  if not loads then error("suite.sweep_plan: " .. problem, 2) end
  return loads
end

-- Where the load runs: on the server's own machine by the load agent when the server came from
-- vllm.start (its session and port known), so TTFT and ITL carry no network between here and
-- the cloud; from here (through the server's tunnel) with remote = false or for other servers.
local function target(server, opts)
  if opts.remote ~= false and server.session and server.port then
    return "http://127.0.0.1:" .. server.port, server.session
  end
  return server.url, nil
end

-- One planned load, run l.repeats times (runara.repeats); `keep(result)` after each run with
-- the runs so far, so that a report has them if a later run is interrupted.
local function load(server, l, opts, keep)
  local url, on = target(server, opts)
  local count = l.repeats or 1
  return repeats.run(count, function(i)
    return http_load.run{
      name = l.load_name .. (count > 1 and "-r" .. i or ""), url = url, on = on, model = server.model,
      concurrency = l.concurrency, requests = l.requests, max_tokens = l.max_tokens, ignore_eos = true,
      prompts = { input_tokens = l.input_tokens, range_ratio = l.range_ratio },
      warmup = l.warmup, gpu = opts.gpu, quiet = opts.quiet, seed = opts.seed, thresholds = opts.thresholds,
    }
  end, keep)
end

local function phase(opts, name)
  if opts.report then opts.report:phase(name) end
end

-- The serving suite. Options: profile ("full", or "quick" by default on the simulated cloud),
-- report, gpu (a gpu_metrics sampler), quiet, seed, thresholds (http_load's, on every load: a
-- crossed one shows in the report and ends the run with status 4), remote (false: load from this machine through
-- the server's tunnel instead of by the agent on the server's machine), name_prefix (put before each load's name:
-- two suites in one run need different ones), tests (a subset of
-- {"throughput", "latency", "concurrent"}). Returns { throughput =, latency =, concurrent = {…} }.
-- Every argument and option is checked before the first load (suite.plan).
function M.run(server, opts)
  local problem = server_problem(server)
  if problem then error("suite.run: " .. problem, 2) end
  local loads, profile_name = run_plan(opts)
  if not loads then error("suite.run: " .. profile_name, 2) end
  opts = opts or {}
  if opts.report then opts.report:set("benchmarks.suite_profile", profile_name) end
  local out = { profile = profile_name, concurrent = {} }
  for _, l in ipairs(loads) do
    phase(opts, l.phase)
    local meta
    if l.test == "throughput" then
      meta = { kind = "throughput", max_tokens = l.max_tokens, batch_size = 1, prompt_length = l.input_tokens }
    elseif l.test == "latency" then
      meta = { kind = "latency" }
    else
      meta = { kind = "concurrent", concurrency = l.concurrency }
    end
    -- The report gets the runs so far after each one (the same name: replaced), so a run
    -- interrupted in a later repeat still reports the earlier ones.
    local r = load(server, l, opts, opts.report and function(so_far) opts.report:add_load(l.name, so_far, meta) end)
    if l.test == "throughput" then out.throughput = r
    elseif l.test == "latency" then out.latency = r
    else out.concurrent[#out.concurrent + 1] = r end
  end
  return out
end

-- The sweep of Dell and Metrum AI's MI300X study: one load per concurrency over a pool of varied prompts. Options:
-- concurrency (list, default 64 … 2048), requests_per_stream (default 2; requests = that ×
-- concurrency), input_tokens (default 1024), range_ratio (default 0.5, the "prompt randomizer"),
-- max_tokens (default 256), report, gpu, quiet, seed, remote, name_prefix (as suite.run).
-- Returns the list of results. Every option is checked before the first load (suite.sweep_plan).
function M.sweep(server, opts)
  local problem = server_problem(server)
  if problem then error("suite.sweep: " .. problem, 2) end
  local loads, plan_problem = sweep_plan(opts)
  if not loads then error("suite.sweep: " .. plan_problem, 2) end
  opts = opts or {}
  local results = {}
  for _, l in ipairs(loads) do
    phase(opts, l.phase)
    results[#results + 1] = load(server, l, opts)
    -- After each point, so that a report written at Ctrl-C has the points finished so far.
    if opts.report then opts.report:add_sweep("sweep", results) end
  end
  return results
end

return M
