-- runara.suite: the plan of loads (seed 000 §4's suite, seed 004's sweep) without a server, what
-- suite.run/suite.sweep hand to http_load.run (replaced here by a recorder), and every option
-- error pointing at this file's line.
local t = require("t")
local suite = require("runara.suite")

local HERE = "test_suite.lua:%d+:"
local server = { url = "http://127.0.0.1:9", model = "meta-llama/Llama-3.3-70B-Instruct" }

local function names(loads, key)
  local out = {}
  for _, l in ipairs(loads) do out[#out + 1] = tostring(l[key or "name"]) end
  return table.concat(out, ",")
end

-- Runs fn with http_load.run recording its arguments (and returning a fake result per load).
local function recording(fn)
  local real = http_load
  local calls = {}
  http_load = { run = function(args)
    calls[#calls + 1] = args
    return { name = args.name, max_concurrency = args.concurrency, output_throughput = 100 * #calls }
  end }
  local ok, err = pcall(fn)
  http_load = real
  if not ok then error(err, 0) end
  return calls
end

-- A report that records what the suite puts into it.
local function fake_report()
  local rep = { phases = {}, loads = {}, sets = {}, sweeps = {} }
  function rep:phase(name) self.phases[#self.phases + 1] = name end
  function rep:set(key, value) self.sets[key] = value end
  -- As runara.report's: the same name again replaces the load; every call is kept in `added`.
  rep.added = {}
  function rep:add_load(name, result, meta)
    self.added[#self.added + 1] = { name = name, result = result }
    for i, l in ipairs(self.loads) do
      if l.name == name then self.loads[i] = { name = name, result = result, meta = meta }; return end
    end
    self.loads[#self.loads + 1] = { name = name, result = result, meta = meta }
  end
  function rep:add_sweep(name, results) self.sweeps[#self.sweeps + 1] = { name = name, results = results, count = #results } end
  return rep
end

t.test("plan: the full profile is seed 000's four loads", function()
  local loads, profile = suite.plan{ profile = "full" }
  t.eq(profile, "full")
  t.eq(names(loads), "throughput,ttft,concurrent_10,concurrent_32")
  t.eq(names(loads, "kind"), "throughput,latency,concurrent,concurrent")
  t.eq(names(loads, "concurrency"), "1,1,10,32")
  t.eq(names(loads, "requests"), "3,10,30,96")
  t.eq(names(loads, "input_tokens"), "256,32,256,256")
  t.eq(names(loads, "max_tokens"), "2048,16,512,512")
  t.eq(names(loads, "phase"), "throughput,ttft,concurrent_10,concurrent_32")
end)

t.test("plan: the quick profile shortens generations, same shape", function()
  local loads, profile = suite.plan{ profile = "quick" }
  t.eq(profile, "quick")
  t.eq(names(loads), "throughput,ttft,concurrent_10,concurrent_32")
  t.eq(names(loads, "requests"), "2,5,20,64")
  t.eq(names(loads, "max_tokens"), "256,16,128,128")
  t.eq(names(loads, "input_tokens"), "256,32,256,256")
end)

t.test("plan: the default profile is full off the simulated cloud", function()
  t.eq(runara.simulated, false)
  local loads, profile = suite.plan()
  t.eq(profile, "full")
  t.eq(#loads, 4)
  t.eq(select(2, suite.plan{}), "full")
end)

t.test("plan: tests subsets keep the suite's order", function()
  t.eq(names((suite.plan{ tests = { "latency" } })), "ttft")
  t.eq(names((suite.plan{ tests = { "concurrent", "throughput" } })), "throughput,concurrent_10,concurrent_32")
  t.eq(names((suite.plan{ tests = { "concurrent" }, profile = "quick" }), "requests"), "20,64")
  t.eq(names((suite.plan{ tests = { "latency", "latency" } })), "ttft")
end)

t.test("plan: name_prefix names the loads, not the report's rows", function()
  local loads = suite.plan{ name_prefix = "h100_", tests = { "throughput", "latency" } }
  t.eq(names(loads), "throughput,ttft")
  t.eq(names(loads, "load_name"), "h100_throughput,h100_ttft")
  t.eq(names((suite.plan{ tests = { "latency" } }), "load_name"), "ttft")
end)

t.test("sweep_plan: seed 004's defaults", function()
  local loads = suite.sweep_plan()
  t.eq(names(loads), "sweep-c64,sweep-c128,sweep-c256,sweep-c512,sweep-c1024,sweep-c2048")
  t.eq(names(loads, "requests"), "128,256,512,1024,2048,4096")
  t.eq(names(loads, "input_tokens"), "1024,1024,1024,1024,1024,1024")
  t.eq(names(loads, "range_ratio"), "0.5,0.5,0.5,0.5,0.5,0.5")
  t.eq(names(loads, "max_tokens"), "256,256,256,256,256,256")
  t.eq(names(loads, "phase"), "c=64,c=128,c=256,c=512,c=1024,c=2048")
end)

t.test("sweep_plan: levels and sizes from the options", function()
  local loads = suite.sweep_plan{ concurrency = { 8, 1, 300 }, requests_per_stream = 3, input_tokens = 128,
    range_ratio = 0, max_tokens = 32, name_prefix = "a_" }
  t.eq(names(loads), "sweep-c8,sweep-c1,sweep-c300")
  t.eq(names(loads, "load_name"), "a_sweep-c8,a_sweep-c1,a_sweep-c300")
  t.eq(names(loads, "requests"), "24,3,900")
  t.eq(names(loads, "input_tokens"), "128,128,128")
  t.eq(names(loads, "range_ratio"), "0,0,0")
  t.eq(names(loads, "max_tokens"), "32,32,32")
end)

t.test("run: each planned load goes to http_load.run and the report", function()
  local rep = fake_report()
  local out
  local calls = recording(function()
    out = suite.run(server, { profile = "quick", report = rep, remote = false, quiet = true, seed = 7, name_prefix = "x_" })
  end)
  -- The quick profile's latency test runs three times after a warm-up request (runara.repeats).
  t.eq(names(calls), "x_throughput,x_ttft-r1,x_ttft-r2,x_ttft-r3,x_concurrent_10,x_concurrent_32")
  t.eq(names(calls, "requests"), "2,5,5,5,20,64")
  t.eq(names(calls, "max_tokens"), "256,16,16,16,128,128")
  t.eq(calls[2].warmup, 1)
  t.eq(calls[1].url, server.url)
  t.eq(calls[1].on, nil)
  t.eq(calls[1].model, server.model)
  t.eq(calls[1].ignore_eos, true)
  t.eq(calls[1].prompts.input_tokens, 256)
  t.eq(calls[2].prompts.input_tokens, 32)
  t.eq(calls[6].seed, 7)
  t.eq(calls[6].quiet, true)
  t.eq(out.profile, "quick")
  t.eq(out.throughput.name, "x_throughput")
  t.eq(out.latency.name, "x_ttft-r3")  -- the repeats combined, the last run's other fields
  t.eq(out.latency.repeats.count, 3)
  t.eq(#out.concurrent, 2)
  t.eq(out.concurrent[2].name, "x_concurrent_32")
  t.eq(rep.sets["benchmarks.suite_profile"], "quick")
  t.eq(table.concat(rep.phases, ","), "throughput,ttft,concurrent_10,concurrent_32")
  t.eq(#rep.loads, 4)
  t.eq(rep.loads[1].name, "throughput")
  t.eq(rep.loads[1].meta.kind, "throughput")
  t.eq(rep.loads[1].meta.max_tokens, 256)
  t.eq(rep.loads[1].meta.batch_size, 1)
  t.eq(rep.loads[1].meta.prompt_length, 256)
  t.eq(rep.loads[2].meta.kind, "latency")
  t.eq(rep.loads[4].meta.kind, "concurrent")
  t.eq(rep.loads[4].meta.concurrency, 32)
  t.eq(rep.loads[4].result, out.concurrent[2])
  -- The repeated ttft load reached the report after each run: the first alone, then two and
  -- three combined, so an interrupted third run leaves the first two in the report.
  t.eq(rep.added[2].name, "ttft"); t.eq(rep.added[2].result.name, "x_ttft-r1"); t.eq(rep.added[2].result.repeats, nil)
  t.eq(rep.added[3].result.repeats.count, 2); t.eq(rep.added[4].result.repeats.count, 3)
  t.eq(rep.loads[2].result, out.latency)
end)

t.test("run: a server from vllm.start is loaded on its own machine", function()
  local session = { name = "fake" }
  local calls = recording(function()
    suite.run({ url = "http://127.0.0.1:5555", model = "m", session = session, port = 8000 }, { tests = { "latency" }, repeats = 1 })
  end)
  t.eq(#calls, 1)
  t.eq(calls[1].url, "http://127.0.0.1:8000")
  t.eq(calls[1].on, session)
end)

t.test("sweep: each level goes to http_load.run, the table to the report", function()
  local rep = fake_report()
  local out
  local calls = recording(function()
    out = suite.sweep(server, { concurrency = { 2, 4 }, requests_per_stream = 1, input_tokens = 64, max_tokens = 8, report = rep })
  end)
  t.eq(names(calls), "sweep-c2,sweep-c4")
  t.eq(names(calls, "requests"), "2,4")
  t.eq(calls[2].prompts.input_tokens, 64)
  t.eq(calls[2].prompts.range_ratio, 0.5)
  t.eq(calls[2].max_tokens, 8)
  t.eq(#out, 2)
  t.eq(table.concat(rep.phases, ","), "c=2,c=4")
  -- Added after each point (the report keeps the last under its name), so Ctrl-C keeps what finished.
  t.eq(#rep.sweeps, 2)
  t.eq(rep.sweeps[1].name, "sweep")
  t.eq(rep.sweeps[1].count, 1)
  t.eq(rep.sweeps[2].count, 2)
  t.eq(rep.sweeps[2].results, out)
end)

t.test("run and sweep: a bad option stops them before the first load", function()
  local calls = recording(function()
    t.raises(function() suite.sweep(server, { concurrency = { 64, "128" } }) end, "item 2 is \"128\"", HERE)
    t.raises(function() suite.run(server, { tests = { "throughput", "latancy" } }) end, "latancy", HERE)
  end)
  t.eq(#calls, 0)
end)

t.test("run: argument and option errors point at the caller's line", function()
  t.raises(function() suite.run(nil) end, "suite.run: argument 'server' must be a server from vllm.start", HERE)
  t.raises(function() suite.run({ url = "http://x" }) end, "argument 'server'", HERE)
  t.raises(function() suite.run(server, "quick") end, "suite.run: options must be a table, got string", HERE)
  t.raises(function() suite.run(server, { profle = "quick" }) end,
    "suite.run: unknown option 'profle' (did you mean 'profile'?)", HERE)
  t.raises(function() suite.run(server, { concurrency = { 8 } }) end, "suite.run: unknown option 'concurrency' (options: ", HERE)
  t.raises(function() suite.run(server, { profile = "fast" }) end,
    "suite.run: option 'profile' must be \"full\" or \"quick\", got \"fast\"", HERE)
  t.raises(function() suite.run(server, { tests = { "latancy" } }) end,
    "suite.run: option 'tests': unknown test \"latancy\" (did you mean \"latency\"?)", HERE)
  t.raises(function() suite.run(server, { tests = { "gemm" } }) end, "unknown test \"gemm\" (tests: ", HERE)
  t.raises(function() suite.run(server, { tests = "latency" }) end, "option 'tests' must be a list of", HERE)
  t.raises(function() suite.run(server, { tests = {} }) end, "option 'tests' must be a list of", HERE)
  t.raises(function() suite.run(server, { name_prefix = 1 }) end, "option 'name_prefix' must be a string, got 1", HERE)
  t.raises(function() suite.run(server, { quiet = "yes" }) end, "option 'quiet' must be true or false, got \"yes\"", HERE)
  t.raises(function() suite.run(server, { remote = "false" }) end, "option 'remote' must be true or false", HERE)
  t.raises(function() suite.run(server, { seed = "1" }) end, "option 'seed' must be a number", HERE)
  t.raises(function() suite.run(server, { report = "report.md" }) end, "option 'report' must be a report", HERE)
end)

t.test("sweep: argument and option errors point at the caller's line", function()
  t.raises(function() suite.sweep(nil, {}) end, "suite.sweep: argument 'server'", HERE)
  t.raises(function() suite.sweep(server, 64) end, "suite.sweep: options must be a table, got number", HERE)
  t.raises(function() suite.sweep(server, { concurency = { 64 } }) end,
    "suite.sweep: unknown option 'concurency' (did you mean 'concurrency'?)", HERE)
  t.raises(function() suite.sweep(server, { profile = "quick" }) end, "suite.sweep: unknown option 'profile'", HERE)
  t.raises(function() suite.sweep(server, { concurrency = 64 }) end,
    "suite.sweep: option 'concurrency' must be a list of whole numbers >= 1, got 64", HERE)
  t.raises(function() suite.sweep(server, { concurrency = {} }) end, "got an empty table", HERE)
  t.raises(function() suite.sweep(server, { concurrency = { 64, 0 } }) end, "item 2 is 0", HERE)
  t.raises(function() suite.sweep(server, { concurrency = { 1.5 } }) end, "item 1 is 1.5", HERE)
  t.raises(function() suite.sweep(server, { requests_per_stream = 0 }) end,
    "option 'requests_per_stream' must be a whole number >= 1, got 0", HERE)
  t.raises(function() suite.sweep(server, { input_tokens = "1024" }) end, "option 'input_tokens' must be a whole number", HERE)
  t.raises(function() suite.sweep(server, { max_tokens = -1 }) end, "option 'max_tokens' must be a whole number", HERE)
  t.raises(function() suite.sweep(server, { range_ratio = 1 }) end, "option 'range_ratio' must be a number from 0 to below 1, got 1", HERE)
  t.raises(function() suite.sweep(server, { range_ratio = -0.1 }) end, "option 'range_ratio'", HERE)
  t.raises(function() suite.sweep(server, { quiet = 1 }) end, "option 'quiet' must be true or false", HERE)
end)

t.test("plan and sweep_plan: errors name themselves and point at the caller's line", function()
  t.raises(function() suite.plan{ profile = "slow" } end, "suite.plan: option 'profile'", HERE)
  t.raises(function() suite.plan("full") end, "suite.plan: options must be a table", HERE)
  t.raises(function() suite.sweep_plan{ concurrency = { "x" } } end, "suite.sweep_plan: option 'concurrency'", HERE)
  t.raises(function() suite.sweep_plan{ levels = { 1 } } end, "suite.sweep_plan: unknown option 'levels'", HERE)
end)

t.done()
