-- Each stdlib function that checks its arguments raises a bad one at the line that called it —
-- this file's — however many stdlib frames lie between (a machine's view passing the call on to
-- the report, runara.scenario calling vllm.start or report.new, repeats.run combining).
-- Each check: at(function() CALL end, "message start"), CALL on the line where at( opens, asserts
-- that CALL raises "test_error_levels.lua:N: message start…" with N that very line.
local t = require("t")
local stats = require("stats")
local sha256 = require("runara.sha256")
local mlperf = require("runara.mlperf")
local gemm = require("runara.gemm")
local training = require("runara.training")
local training_report = require("runara.training_report")
local finetune = require("runara.finetune")
local machine = require("runara.machine")
local container = require("runara.container")
local repeats = require("runara.repeats")
local suite = require("runara.suite")
local vllm = require("runara.vllm")
local report = require("runara.report")
local scenario = require("runara.scenario")

local FILE = "test_error_levels.lua"
local MODEL = "meta-llama/Llama-3.3-70B-Instruct"
local checked = 0

-- "test_error_levels.lua:N: " for the line that called at(): error's own position, read back
-- through pcall (the sandbox has no debug library). Level 2 is this function, 3 at(), 4 its caller.
local function caller_position()
  local _, e = pcall(error, "", 4)
  return e
end

-- fn (written on the same line as this call) must raise an error that starts with this line's
-- position followed by `start`.
local function at(fn, start)
  local where = caller_position()
  -- (the file as ctest names it, by its full path, or as run from its folder)
  if not ("/" .. where):match("/" .. FILE:gsub("%.", "%%.") .. ":%d+: $") then error("no position for the calling line: " .. where, 2) end
  local ok, err = pcall(fn)
  if ok then error("expected an error starting " .. string.format("%q", start) .. ", got none", 2) end
  err = tostring(err)
  if err:sub(1, #where + #start) ~= where .. start then
    error(string.format("expected %q, got %q", where .. start .. "…", err), 2)
  end
  checked = checked + 1
  return err
end

-- A stand-in for an ssh session. tools: what the GPU-tool probe prints ("amd none", "none none", …);
-- its one process has already exited, printing `said`.
local function fake_session(name, tools, said)
  local s = { name = name, calls = {} }
  function s:exec(cmd)
    self.calls[#self.calls + 1] = "exec"
    -- A run's working folder (runara.machine.workdir), as mktemp -d would name it.
    local template = cmd:match('mktemp %-d "%$HOME"/(%S+)XXXXXXXX$')
    if template then return { stdout = "/home/fake/" .. template .. "Ab3dE6gH\n", stderr = "", code = 0 } end
    return { stdout = (tools or "none none") .. "\n", stderr = "", code = 0 }
  end
  function s:spawn()
    self.calls[#self.calls + 1] = "spawn"
    return { running = function() return false end, output = function() return { stdout = said or "" } end,
             kill = function() end, wait = function() end }
  end
  function s:forward() return "http://127.0.0.1:1" end
  return s
end

t.test("stats: lists and q", function()
  at(function() stats.mean("x") end, "stats.mean: expected a list of numbers, got string")
  at(function() stats.mean({ 1, "2" }) end, "stats.mean: item 2 is string, expected a number")
  at(function() stats.percentile(nil, 50) end, "stats.percentile: expected a list of numbers, got nil")
  at(function() stats.percentile({ 1, 2 }, 101) end, "stats.percentile: q must be a number from 0 to 100, got 101")
  at(function() stats.summary({ 1, {} }) end, "stats.summary: item 2 is table, expected a number")
end)

t.test("sha256, mlperf, gemm: text arguments", function()
  at(function() sha256(42) end, "sha256: argument must be a string, got number")
  at(function() mlperf.parse(42) end, "mlperf.parse: argument 'text' must be the text of mlperf_log_summary.txt")
  at(function() mlperf.parse("hello\n") end, "mlperf.parse: not an mlperf_log_summary.txt")
  at(function() gemm.parse(nil) end, "gemm.parse: argument 'text' must be a string, got nil")
  at(function() gemm.peaks(nil) end, "gemm.peaks: argument 'results' must be what gemm.parse returns, got nil")
  at(function() gemm.peaks({ 5 }) end, "gemm.peaks: item 1 of 'results' is not a gemm.parse result")
end)

t.test("training, training_report, finetune", function()
  at(function() training.parse(nil) end, "training.parse: argument 'text' must be a string, got nil")
  local rep = report.new{ title = "training" }
  at(function() training_report.add(nil, training.parse("")) end, "training_report.add: argument 'report' must be a report")
  at(function() training_report.add(rep, nil) end, "training_report.add: argument 'results' must be what training.parse returns, got nil")
  at(function() training_report.add(rep, { matmul = {} }) end, "training_report.add: argument 'results' must be what training.parse returns (its 'linear' list")
  at(function() training_report.add(rep, training.parse(""), 5) end, "training_report.add: options must be a table")
  at(function() finetune.parse(nil) end, "finetune.parse: argument 'text' must be a string, got nil")
  at(function() finetune.summary(nil, 8) end, "finetune.summary: argument 'log' must be what finetune.parse returns, got nil")
  at(function() finetune.summary(finetune.parse(""), 0) end, "finetune.summary: argument 'gpus' must be a whole number >= 1, got 0")
end)

t.test("machine and container: sessions, vendors, specs", function()
  at(function() machine.describe(nil) end, "machine.describe: argument 'session' must be an ssh session (ssh.connect), got nil")
  at(function() container.vendor(nil) end, "container.vendor: argument 'session' must be an ssh session")
  at(function() container.vendor({}) end, "container.vendor: argument 'session' must be an ssh session")
  at(function() container.vendor(fake_session("cpu-box")) end, "container.vendor: no GPU tool (amd-smi, rocm-smi or nvidia-smi) on cpu-box")
  at(function() container.detect("root@host") end, "container.detect: argument 'session' must be an ssh session")
  at(function() container.image("intel", "vllm") end, "container.image: vendor must be \"amd\" or \"nvidia\"")
  at(function() container.image("amd") end, "container.image: argument 'purpose' is required")
  at(function() container.command{ vendor = "amd", purpose = "vllm", nmae = "x" } end, "container.command: unknown option 'nmae' (did you mean 'name'?)")
end)

t.test("repeats: counts, lists, and what a load returned", function()
  at(function() repeats.interval("x") end, "repeats.interval: expected a list of numbers, got string")
  at(function() repeats.interval({ 1, "x" }) end, "repeats.interval: item 2 is x, expected a number")
  at(function() repeats.combine({}) end, "repeats.combine: expected a list of http_load results")
  at(function() repeats.combine({ {}, 5 }) end, "repeats.combine: item 2 is number, expected an http_load result")
  at(function() repeats.run(0, function() return {} end) end, "repeats.run: count must be a whole number >= 1, got 0")
  at(function() repeats.run(2, "load") end, "repeats.run: expected a function that runs one load, got string")
  at(function() repeats.run(2, function() return {} end, 5) end, "repeats.run: after_each must be a function(so_far, i) or nil, got number")
  -- Combining runs inside repeats.run: the second load returned no result.
  at(function() repeats.run(2, function(i) return i == 1 and {} or "x" end) end, "repeats.run: load(2) returned string, expected an http_load result")
end)

t.test("repeats: a figure that is NaN in a run is the last run's, not an error from inside repeats", function()
  local r = repeats.combine({ { median_ttft_ms = 0 / 0, output_throughput = 10 }, { median_ttft_ms = 5, output_throughput = 12 } })
  t.eq(r.median_ttft_ms, 5)
  t.eq(r.output_throughput, 11)
  local ok, err = pcall(repeats.run, 2, function(i) return { median_ttft_ms = i == 2 and 0 / 0 or 4 } end)
  t.truthy(ok, "repeats.run with a NaN figure: " .. tostring(err))
end)

t.test("suite: server, options, the report option", function()
  local server = { url = "http://127.0.0.1:1", model = MODEL }
  at(function() suite.plan("full") end, "suite.plan: options must be a table, got string")
  at(function() suite.sweep_plan{ levels = { 1 } } end, "suite.sweep_plan: unknown option 'levels'")
  at(function() suite.run(nil) end, "suite.run: argument 'server' must be a server from vllm.start")
  at(function() suite.run(server, { profle = "quick" }) end, "suite.run: unknown option 'profle' (did you mean 'profile'?)")
  at(function() suite.run(server, { report = {} }) end, "suite.run: option 'report' must be a report from runara.report's new, got an empty table")
  at(function() suite.sweep(server, { concurency = { 64 } }) end, "suite.sweep: unknown option 'concurency' (did you mean 'concurrency'?)")
  at(function() suite.sweep(server, { report = "report.md" }) end, "suite.sweep: option 'report' must be a report")
end)

t.test("vllm.start: session, options, the machine's GPU tool, a server that exits", function()
  at(function() vllm.start(nil, { model = MODEL }) end, "vllm.start: argument 'session' must be an ssh session (ssh.connect), got nil")
  at(function() vllm.start(fake_session("fake"), { modle = MODEL }) end, "vllm.start: unknown option 'modle' (did you mean 'model'?)")
  at(function() vllm.start(fake_session("cpu-box"), { model = MODEL }) end, "vllm.start: no GPU tool (amd-smi, rocm-smi or nvidia-smi) on cpu-box")
  at(function() vllm.start(fake_session("dead", "none none", "Traceback: boom\n"), { model = MODEL, gpu = "nvidia", mode = "pip", poll = 0.01 }) end,
     "vllm.start: the server on dead exited before it was ready; its last lines:\nTraceback: boom")
  -- try_start returns the same message instead of raising it.
  local server, message = vllm.try_start(fake_session("cpu-box"), { model = MODEL })
  t.eq(server, nil)
  t.match(message, "^vllm%.start: no GPU tool")
end)

t.test("report: report.new and every method with a bad argument", function()
  at(function() report.new(5) end, "report.new: options must be a table, got number")
  at(function() report.new{ reference = "nope" } end, "report.new: unknown reference 'nope'")
  at(function() report.sweep_table(nil) end, "report.sweep_table: argument 'results' must be a list of http_load results, got nil")
  local rep = report.new{ title = "levels" }
  rep:machine("a", { label = "A" })
  at(function() rep:metadata(5) end, "report:metadata: argument must be a table of fields")
  at(function() rep:manifest(5) end, "report:manifest: argument must be a table of fields")
  at(function() rep:bill(5) end, "report:bill: argument must be a droplet")
  at(function() rep:bill({}, { machine = "q" }) end, "report:bill: option 'machine': no machine 'q'")
  at(function() rep:add_load("x", 5) end, "report:add_load: argument 'result' must be an http_load.run result, got number")
  at(function() rep:add_load("x", {}, { kind = "bogus" }) end, "report:add_load: option 'kind' must be throughput, latency, concurrent or load, got bogus")
  at(function() rep:add_load("x", {}, { machine = "nope" }) end, "report:add_load: option 'machine': no machine 'nope'")
  at(function() rep:add_load("x", {}, 5) end, "report:add_load: options must be a table, got number")
  at(function() rep:add_sweep("x", 5) end, "report:add_sweep: argument 'results' must be a list of http_load results")
  at(function() rep:add_sweep("x", {}, 5) end, "report:add_sweep: options must be a table, got number")
  at(function() rep:add_gpu(5) end, "report:add_gpu: argument must be what a gpu_metrics sampler's stop() returns")
  at(function() rep:add_gpu({}, { machine = "nope" }) end, "report:add_gpu: option 'machine': no machine 'nope'")
  at(function() rep:add_server_metrics(5) end, "report:add_server_metrics: argument must be what a metrics sampler's stop() returns")
  at(function() rep:add_table("x", { columns = {} }) end, "report:add_table: argument must be { columns = {...}, rows = { {...}, ... } }")
  at(function() rep:add_table("x", { columns = {}, rows = {} }, { machine = "nope" }) end, "report:add_table: option 'machine': no machine 'nope'")
  at(function() rep:add_chart("x", 5) end, "report:add_chart: argument must be { series = ")
  at(function() rep:add_chart("x", { series = { { name = "a" } } }) end, "report:add_chart: series 1 has no points list")
  at(function() rep:add_chart("x", { series = {} }, { machine = "zz" }) end, "report:add_chart: option 'machine': no machine 'zz'")
  at(function() rep:add_file(nil) end, "report:add_file: argument 'path' must be a path in the output folder")
  at(function() rep:set("..", 1) end, "report:set: argument 'path' must be a dotted name such as benchmarks.mlperf")
  at(function() rep:machine("a b") end, "report:machine: argument 'key' must be a name of letters, digits, '_', '-' or '.', got a b")
  at(function() rep:machine("b", 5) end, "report:machine: options must be a table, got number")
  at(function() rep:run(nil) end, "report:run: argument 'body' must be a function, got nil")
  at(function() rep:run(function() end, 5) end, "report:run: argument 'after' must be a function(paths) or nil, got number")
  at(function() rep:summary(5) end, "report:summary: argument 'paths' must be what rep:write() returns (or nil), got number")
  -- Nothing was added by the refused calls.
  t.eq(#rep.loads, 0); t.eq(#rep.sweeps, 0); t.eq(#rep.tables, 0); t.eq(#rep.charts, 0); t.eq(#rep.machines, 1)
end)

t.test("report: a machine's view passes each call on to the report, its errors still at this line", function()
  local rep = report.new{ title = "views" }
  local view = rep:machine("mi300x", { label = "MI300X" })
  at(function() view:metadata(5) end, "report:metadata: argument must be a table of fields")
  at(function() view:bill(5) end, "report:bill: argument must be a droplet")
  at(function() view:add_load("x", nil) end, "report:add_load: argument 'result' must be an http_load.run result, got nil")
  at(function() view:add_load("x", {}, { kind = "bogus" }) end, "report:add_load: option 'kind' must be throughput, latency, concurrent or load, got bogus")
  at(function() view:add_load("x", {}, 5) end, "report:add_load: options must be a table, got number")
  at(function() view:add_sweep("x", 5) end, "report:add_sweep: argument 'results' must be a list of http_load results")
  at(function() view:add_sweep("x", {}, 5) end, "report:add_sweep: options must be a table, got number")
  at(function() view:add_gpu(5) end, "report:add_gpu: argument must be what a gpu_metrics sampler's stop() returns")
  at(function() view:add_server_metrics(5) end, "report:add_server_metrics: argument must be what a metrics sampler's stop() returns")
  at(function() view:add_table("x", 5) end, "report:add_table: argument must be { columns = ")
  at(function() view:add_file("") end, "report:add_file: argument 'path' must be a path in the output folder")
  at(function() view:set("", 1) end, "report:set: argument 'path' must be a dotted name such as benchmarks.mlperf")
  at(function() view:run(nil) end, "report:run: argument 'body' must be a function, got nil")
  t.eq(#rep.loads, 0); t.eq(#rep.sweeps, 0); t.eq(#rep.tables, 0)
  -- A good call through the view still lands on its machine.
  view:add_load("ok", { output_throughput = 1 }, { kind = "throughput" })
  t.eq(rep.loads[1].machine, "mi300x")
end)

t.test("scenario.run: the declaration's mistakes, its reference included (report.new called for it)", function()
  local body = function() end
  at(function() scenario.run("x", body) end, "scenario.run: argument 'declaration' must be a table")
  at(function() scenario.run({ params = { { name = "a", type = "float" } } }, body) end, "scenario.run: param 'a': type must be string, number, integer, integers or boolean, got float")
  at(function() scenario.run({ params = {} }, nil) end, "scenario.run: argument 'body' must be a function(sc)")
  at(function() scenario.run({ params = {}, reference = function() return "nope" end }, body) end, "report.new: unknown reference 'nope'")
end)

-- Last: scenario.run writes this run's report (results.json, report.md, report.html).
t.test("sc:machine and sc:serve: their own checks, and vllm.start's errors raised through sc:serve", function()
  scenario.run({ params = {}, title = "error levels", summary = function() end }, function(sc)
    at(function() sc:machine(5) end, "sc:machine: argument must be a table { name =, size =, image =, region = }")
    at(function() sc:machine{ name = "x", report = "r" } end, "sc:machine: option 'report' must be the scenario's report or a machine's view of it (rep:machine), got \"r\"")
    at(function() sc:machine{ name = "x", gpu_interval = "1s" } end, "sc:machine: option 'gpu_interval' must be a number of seconds above 0, got \"1s\"")
    at(function() sc:machine{ name = "x", timeout = 0 } end, "sc:machine: option 'timeout' must be a number of seconds above 0, got 0")
    at(function() sc:serve(nil, { modle = MODEL }) end, "vllm.start: unknown option 'modle' (did you mean 'model'?)")
    at(function() sc:serve(nil, { model = MODEL }) end, "sc:serve: argument 'machine' must be what sc:machine returned, got nil")
    at(function() sc:serve({ session = fake_session("cpu-box") }, { model = MODEL }) end, "vllm.start: no GPU tool (amd-smi, rocm-smi or nvidia-smi) on cpu-box")
    at(function() sc:serve({ session = fake_session("dead", "none none", "OOM\n") }, { model = MODEL, gpu = "amd", mode = "pip", poll = 0.01 }) end,
       "vllm.start: the server on dead exited before it was ready; its last lines:\nOOM")
    at(function() sc:serve_replicas(nil, { model = MODEL, count = 3, gpus = 8 }) end, "replicas.start: 3 replicas do not divide the machine's 8 GPUs evenly")
    at(function() sc:serve_replicas(nil, { model = MODEL, count = 2, gpus = 8 }) end, "sc:serve_replicas: argument 'machine' must be what sc:machine returned, got nil")
    at(function() sc:serve_replicas({ session = fake_session("dead", "none none", "OOM\n") }, { model = MODEL, count = 2, gpus = 8, gpu = "amd", mode = "pip", poll = 0.01 }) end,
       "replicas.start: replica 1 of 2 (port 8001, GPUs 0,1,2,3) failed: the server on dead exited before it was ready; its last lines:\nOOM")
    t.eq(#sc.servers, 0)
  end)
end)

t.test("every check above ran", function() t.eq(checked, 102) end)

t.done()
