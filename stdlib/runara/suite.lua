-- runara.suite: the serving tests of the Runara plan (seed 000 §4: single-stream throughput
-- with a long generation, TTFT on a short prompt, 10 and 32 concurrent requests) and the
-- concurrency sweep of the Dell/Metrum method (seed 004: 64 … 2048 streams over a prompt pool).
--
--   local suite = require("runara.suite")
--   suite.run(server, { report = rep, gpu = sampler })
--   suite.sweep(server, { concurrency = { 64, 128, 256 }, report = rep, gpu = sampler })
--
-- Every test is an http_load.run against the server's URL; its result also goes to the report
-- (runara.report) when one is given. See docs/stdlib.md#runarasuite.
local M = {}

-- Seed 000's test parameters ("full"), and a shortened profile for rehearsals on the simulated
-- cloud, where generation happens in real time ("quick"; the report says which one ran).
M.profiles = {
  full = {
    throughput = { concurrency = 1, requests = 3, input_tokens = 256, max_tokens = 2048 },
    latency = { concurrency = 1, requests = 10, input_tokens = 32, max_tokens = 16 },
    concurrent = {
      { concurrency = 10, requests = 30, input_tokens = 256, max_tokens = 512 },
      { concurrency = 32, requests = 96, input_tokens = 256, max_tokens = 512 },
    },
  },
  quick = {
    throughput = { concurrency = 1, requests = 2, input_tokens = 256, max_tokens = 256 },
    latency = { concurrency = 1, requests = 5, input_tokens = 32, max_tokens = 16 },
    concurrent = {
      { concurrency = 10, requests = 20, input_tokens = 256, max_tokens = 128 },
      { concurrency = 32, requests = 64, input_tokens = 256, max_tokens = 128 },
    },
  },
}

local function fail(fn, fmt, ...) error(fn .. ": " .. string.format(fmt, ...), 3) end

local function check_server(fn, server)
  if type(server) ~= "table" or type(server.url) ~= "string" or type(server.model) ~= "string" then
    fail(fn, "argument 'server' must be a server from vllm.start (or a table with url and model)")
  end
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

local function load(server, name, t, opts)
  local url, on = target(server, opts)
  local result = http_load.run{
    name = (opts.name_prefix or "") .. name, url = url, on = on, model = server.model, concurrency = t.concurrency, requests = t.requests,
    max_tokens = t.max_tokens, ignore_eos = true, prompts = { input_tokens = t.input_tokens, range_ratio = t.range_ratio },
    warmup = t.warmup, gpu = opts.gpu, quiet = opts.quiet, seed = opts.seed,
  }
  return result
end

local function phase(opts, name)
  if opts.report then opts.report:phase(name) end
end

-- Seed 000's suite. Options: profile ("full", or "quick" by default on the simulated cloud),
-- report, gpu (a gpu_metrics sampler), quiet, seed, remote (false: load from this machine through
-- the server's tunnel instead of by the agent on the server's machine), name_prefix (put before each load's name:
-- two suites in one run need different ones), tests (a subset of
-- {"throughput", "latency", "concurrent"}). Returns { throughput =, latency =, concurrent = {…} }.
function M.run(server, opts)
  local fn = "suite.run"
  check_server(fn, server)
  opts = opts or {}
  if type(opts) ~= "table" then fail(fn, "options must be a table") end
  local profile_name = opts.profile or (runara.simulated and "quick" or "full")
  local p = M.profiles[profile_name]
  if not p then fail(fn, "option 'profile' must be \"full\" or \"quick\", got %s", tostring(profile_name)) end
  local wanted = {}
  for _, t in ipairs(opts.tests or { "throughput", "latency", "concurrent" }) do wanted[t] = true end
  if opts.report then opts.report:set("benchmarks.suite_profile", profile_name) end
  local out = { profile = profile_name, concurrent = {} }
  if wanted.throughput then
    phase(opts, "throughput")
    out.throughput = load(server, "throughput", p.throughput, opts)
    if opts.report then opts.report:add_load("throughput", out.throughput, { kind = "throughput",
      max_tokens = p.throughput.max_tokens, batch_size = 1, prompt_length = p.throughput.input_tokens }) end
  end
  if wanted.latency then
    phase(opts, "ttft")
    out.latency = load(server, "ttft", p.latency, opts)
    if opts.report then opts.report:add_load("ttft", out.latency, { kind = "latency" }) end
  end
  if wanted.concurrent then
    for _, t in ipairs(p.concurrent) do
      local name = "concurrent_" .. t.concurrency
      phase(opts, name)
      local r = load(server, name, t, opts)
      out.concurrent[#out.concurrent + 1] = r
      if opts.report then opts.report:add_load(name, r, { kind = "concurrent", concurrency = t.concurrency }) end
    end
  end
  return out
end

-- Seed 004's sweep: one load per concurrency over a pool of varied prompts. Options:
-- concurrency (list, default 64 … 2048), requests_per_stream (default 2; requests = that ×
-- concurrency), input_tokens (default 1024), range_ratio (default 0.5, the "prompt randomizer"),
-- max_tokens (default 256), report, gpu, quiet, seed, remote (as suite.run). Returns the list of results.
function M.sweep(server, opts)
  local fn = "suite.sweep"
  check_server(fn, server)
  opts = opts or {}
  local levels = opts.concurrency or { 64, 128, 256, 512, 1024, 2048 }
  if type(levels) ~= "table" or #levels == 0 then fail(fn, "option 'concurrency' must be a list of whole numbers") end
  local results = {}
  for _, c in ipairs(levels) do
    if type(c) ~= "number" or c < 1 or c % 1 ~= 0 then fail(fn, "concurrency %s is not a whole number >= 1", tostring(c)) end
    phase(opts, "c=" .. c)
    results[#results + 1] = load(server, "sweep-c" .. c, {
      concurrency = c, requests = c * (opts.requests_per_stream or 2), input_tokens = opts.input_tokens or 1024,
      range_ratio = opts.range_ratio or 0.5, max_tokens = opts.max_tokens or 256,
    }, opts)
  end
  if opts.report then opts.report:add_sweep("sweep", results) end
  return results
end

return M
