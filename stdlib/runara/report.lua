-- runara.report: what a scenario measured, as results.json (runara's results layout,
-- extended with http_load's full metrics and the GPU summary), report.md and report.html (one
-- self-contained file, charts as inline SVG). A run that failed halfway still writes all three,
-- saying PARTIAL and why. Sections appear only when the run has their data. See docs/report.md.
--
--   local rep = report.new{ title = "Llama-3.3-70B FP8 on MI300X", simulated = runara.simulated,
--                           reference = "llama70b_fp8" }
--   rep:metadata{ gpu = "AMD Instinct MI300X", model = "...", framework = "vLLM 0.6.4" }
--   rep:add_load("throughput", http_load.run{...}, { kind = "throughput" })
--   rep:add_gpu(sampler:stop())
--   rep:write()   --> { json = ..., md = ..., html = ... }
--   rep:run(function() ... end, function(paths) print(paths.html) end)  -- writes even on an error
--
-- Several machines in one report (a comparison): each gets a view, rep:machine(key, {label =}),
-- with the same methods; its loads, GPU samples, server metrics and cost stay its own, and every
-- chart has a series per machine.
--
-- This file holds what a scenario calls to collect its results, and run/write. The rest is in
-- files of their own, whose functions are the report's methods: report_machine.lua (a machine's
-- view), report_figures.lua and report_machine_comparison.lua (the figures), report_summary.lua
-- (the terminal lines), report_document.lua (results.json's sections and the renderers' view),
-- report_render.lua (report.md, report.html), report_sweep_table.lua (a sweep's CSV and JSON),
-- report_checks.lua (the methods' argument errors).
local svg = require("runara.report_svg")
local render = require("runara.report_render")
local references = require("runara.reference_numbers")
local machine = require("runara.report_machine")
local figures = require("runara.report_figures")
local summary = require("runara.report_summary")
local document = require("runara.report_document")
local sweep_table = require("runara.report_sweep_table")
local dotted_path = require("runara.report_dotted_path")
local checks = require("runara.report_checks")
local report_thresholds = require("runara.report_thresholds")

local M = {}
local Report = {}
Report.__index = Report

-- Argument errors: report_checks.lua builds the message, the method raises it with level 2, so
-- it carries the line that called the method (runara.errors' convention).
local report_format = require("runara.report_format")
local finite, num = report_format.finite, report_format.num

function M.new(opts)
  local bad = checks.new(opts)
  if bad then error(bad, 2) end
  opts = opts or {}
  return setmetatable({
    title = tostring(opts.title or "Runara report"), simulated = opts.simulated and true or false,
    reference = opts.reference and references[opts.reference], meta = {}, loads = {}, sweeps = {},
    tables = {}, charts = {}, headlines = {}, extra = {}, phases = {}, billed = {}, machines = {}, machine_views = {}, files = {},
    started = runara.now(), started_unix = os.time(),
  }, Report)
end

function Report:metadata(fields)
  local bad = checks.fields(":metadata", fields)
  if bad then error(bad, 2) end
  for k, v in pairs(fields) do self.meta[tostring(k)] = v end
end

-- Option tables may name the machine (rep:machine's key) the data belongs to: its record, or nil
-- (report_checks.options has checked that it exists).
local machine_opt = checks.machine_of

-- A droplet whose cost so far the report states (metadata.cost_usd, summed over every billed
-- droplet, each counted once), read when the report is written: a report of a failed run states it too.
function Report:bill(d, opts)
  local bad = checks.bill(self, d, opts)
  if bad then error(bad, 2) end
  local m = machine_opt(self, opts)
  local list = m and m.billed or self.billed
  list[#list + 1] = d
end

-- A phase of the run starts now (and is marked on the GPU sampler given as rep.gpu_sampler).
function Report:phase(name)
  name = tostring(name)
  self.phases[#self.phases + 1] = { name = name, t_s = runara.now() - self.started }
  if self.gpu_sampler then pcall(function() self.gpu_sampler:mark(name) end) end
end

-- What a report keeps of an http_load result: its figures, not its per-request lists.
local FIELDS = { "completed", "failed", "duration", "max_concurrency", "num_prompts", "request_throughput",
  "output_throughput", "total_token_throughput", "total_input_tokens", "total_output_tokens",
  "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms",
  "mean_itl_ms", "median_itl_ms", "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms",
  "count_ttft", "count_tpot", "count_itl", "count_e2el",
  -- runara's TTFT from when each request was due, and the wait before the send: shown beside
  -- vLLM's when they differ by more than 5 % (report_load_rows.lua).
  "mean_ttft_from_schedule_ms", "median_ttft_from_schedule_ms", "p99_ttft_from_schedule_ms",
  "count_ttft_from_schedule", "mean_queue_ms",
  "request_goodput", "energy_j", "mean_power_w", "peak_vram_bytes", "output_tokens_per_joule", "label",
  "load_host", "controller_rtt_ms", "energy_source", "energy_note", "client_limit", "client_cpu_utilization" }

local function summarize(res)
  local s = {}
  for _, k in ipairs(FIELDS) do
    local v = res[k]
    if type(v) == "number" then s[k] = num(v) elseif type(v) == "string" then s[k] = v end
  end
  if type(res.errors_by_kind) == "table" then s.errors_by_kind = res.errors_by_kind end
  -- The load's gates (http_load's thresholds), shown with their verdicts (report_thresholds.lua).
  local gates = report_thresholds.keep(res)
  if gates then s.thresholds, s.thresholds_crossed = gates.thresholds, gates.crossed end
  if type(res.client_limited) == "boolean" then s.client_limited = res.client_limited end
  -- Repeats' intervals (runara.repeats), read by runara compare: { low, high } per figure.
  if type(res.intervals) == "table" and type(res.repeats) == "table" then
    s.intervals, s.repeats = {}, { count = num(res.repeats.count), method = tostring(res.repeats.method) }
    for k, v in pairs(res.intervals) do
      if type(v) == "table" and type(v.low) == "number" and type(v.high) == "number" then
        s.intervals[k] = { low = num(v.low), high = num(v.high) }
      end
    end
  end
  return s
end

-- What a load ran with, for the run manifest (runara.manifest): its seed, prompts, max_tokens
-- and tokenizer (http_load's options and tokenizer_id); nil for a result that names none.
local function inputs(res)
  local o = type(res.options) == "table" and res.options or nil
  if not o and res.tokenizer_id == nil then return nil end
  o = o or {}
  local prompts = o.prompts
  if type(prompts) == "table" then
    local p = {}
    for k, v in pairs(prompts) do if type(v) ~= "table" then p[k] = v end end
    prompts = p
  end
  return { seed = o.seed, prompts = prompts, max_tokens = o.max_tokens, ignore_eos = o.ignore_eos,
           tokenizer_id = type(res.tokenizer_id) == "string" and res.tokenizer_id or nil,
           tokenizer_file = type(prompts) == "table" and type(prompts.tokenizer) == "string" or nil }
end

function Report:add_load(name, res, opts)
  local bad = checks.add_load(self, res, opts)
  if bad then error(bad, 2) end
  local m = machine_opt(self, opts)
  opts = opts or {}
  local kind = opts.kind or "load"
  local entry = { name = tostring(name), kind = kind, concurrency = opts.concurrency or res.max_concurrency,
                  machine = m and m.key,
                  config = { max_tokens = opts.max_tokens, batch_size = opts.batch_size, prompt_length = opts.prompt_length },
                  m = summarize(res), inputs = inputs(res) }
  -- The same name on the same machine again replaces the load (runara.suite adds a repeated
  -- load after each of its runs); http_load itself refuses a name twice in a run.
  for i, e in ipairs(self.loads) do
    if e.name == entry.name and e.machine == entry.machine then
      self.loads[i] = entry
      return entry
    end
  end
  self.loads[#self.loads + 1] = entry
  return entry
end

-- A sweep's rows as written to NAME.json, and its CSV text (pure).
M.sweep_table = sweep_table.rows

-- Options: machine, files (false: no NAME.json / NAME.csv).
function Report:add_sweep(name, list, opts)
  local bad = checks.add_sweep(self, list, opts)
  if bad then error(bad, 2) end
  local m = machine_opt(self, opts)
  local rows, ins = {}, {}
  for _, res in ipairs(list) do
    if type(res) == "table" then
      rows[#rows + 1] = summarize(res)
      ins[#rows] = inputs(res) or false
    end
  end
  local sweep = { name = tostring(name), rows = rows, machine = m and m.key, inputs = ins }
  -- The same name (and machine) again replaces the sweep: a sweep added after each point keeps
  -- the points finished so far in a report written at Ctrl-C.
  local at = #self.sweeps + 1
  for i, old in ipairs(self.sweeps) do
    if old.name == sweep.name and old.machine == sweep.machine then at = i end
  end
  self.sweeps[at] = sweep
  if not (opts and opts.files == false) and #rows > 0 then
    local base = ((m and (m.key .. "_") or "") .. sweep.name):gsub("[^%w_%-%.]", "_")
    if base == "results" or base == "report" then base = base .. "_sweep" end
    local ok = pcall(sweep_table.write, base, list)
    if ok then
      sweep.files = { base .. ".json", base .. ".csv" }
      self:add_file(base .. ".csv", "the sweep's table, one row per point")
      self:add_file(base .. ".json", "the same rows as JSON")
    end
  end
end

function Report:add_gpu(res, opts)
  local bad = checks.add_gpu(self, res, opts)
  if bad then error(bad, 2) end
  local m = machine_opt(self, opts)
  if m then m.gpu = res else self.gpu = res end
end

-- What a metrics.start sampler's stop() returned (vLLM's /metrics over the run): charted
-- (requests running and waiting, KV-cache use) and summarised; results.json's benchmarks.vllm_metrics.
function Report:add_server_metrics(res, opts)
  local bad = checks.add_server_metrics(self, res, opts)
  if bad then error(bad, 2) end
  local m = machine_opt(self, opts)
  if m then m.server_metrics = res else self.server_metrics = res end
end

function Report:add_table(name, t, opts)
  local bad = checks.add_table(self, t, opts)
  if bad then error(bad, 2) end
  local m = machine_opt(self, opts)
  self.tables[#self.tables + 1] = { name = tostring(name), columns = t.columns, rows = t.rows, caption = t.caption,
                                    machine = m and m.key }
end

-- A line chart of the scenario's own figures (report.html; report.md lists its points in a
-- table): series = { { name =, points = { {x, y}, ... } }, ... }, x_label, y_label, xlog.
function Report:add_chart(name, c, opts)
  local bad = checks.add_chart(self, c, opts)
  if bad then error(bad, 2) end
  local m = machine_opt(self, opts)
  self.charts[#self.charts + 1] = { name = tostring(name), series = c.series, x_label = c.x_label, y_label = c.y_label,
                                    xlog = c.xlog and true or false, caption = c.caption, machine = m and m.key }
end

-- A headline figure of the scenario's own (GEMM TFLOPS, training tokens/s and MFU, MLPerf
-- samples/s and validity): printed first in rep:summary, a card at the top of report.html, the
-- Headline table of report.md, results.json's `headline`. label: what it is, saying "per GPU"
-- where it is; value: a number, or a word ("VALID"); unit: text or nil; opts: note (its
-- conditions, shown beside it), digits (1 by default). The same label again replaces it.
function Report:headline(label, value, unit, opts)
  local bad = checks.headline(label, value, unit, opts)
  if bad then error(bad, 2) end
  opts = opts or {}
  local h = { label = label, value = value, unit = unit, note = opts.note and tostring(opts.note), digits = opts.digits }
  for i, x in ipairs(self.headlines) do if x.label == label then self.headlines[i] = h return end end
  self.headlines[#self.headlines + 1] = h
end

-- A file the scenario wrote into the output folder, listed (with what it holds) in the reports' footer.
function Report:add_file(path, what)
  local bad = checks.add_file(path)
  if bad then error(bad, 2) end
  for _, f in ipairs(self.files) do if f.path == path then f.what = what and tostring(what) or f.what return end end
  self.files[#self.files + 1] = { path = path, what = what and tostring(what) }
end

-- Free-form data at a dotted path of results.json ("benchmarks.mlperf").
function Report:set(path, value)
  local bad = checks.path(path)
  if bad then error(bad, 2) end
  dotted_path.set(self.extra, path, value)
end

function Report:fail(message)
  self.error = tostring(message)
end

-- The run manifest's fields (runara.manifest: runara, script, params, machines, serving, ...),
-- merged into results.json's `manifest`; the loads' seeds, prompt sets and tokenizer are added
-- when the report is written. runara.scenario fills it; a script of its own may too.
function Report:manifest(fields)
  local bad = checks.fields(":manifest", fields)
  if bad then error(bad, 2) end
  self.manifest_fields = self.manifest_fields or {}
  for k, v in pairs(fields) do self.manifest_fields[tostring(k)] = v end
end

-- Declares a machine of the report, or returns the one declared under `key` (report_machine.lua).
Report.machine = machine.machine

-- The figures (report_figures.lua): benchmarks() in the plan's layout, the reference that
-- applies to this run, comparison(b) with it (comparable_nvidia), what the droplets cost.
Report.benchmarks = figures.benchmarks
Report.applicable_reference = figures.applicable_reference
Report.comparison = figures.comparison
Report.billed_cost = figures.billed_cost

-- A few lines for the terminal at the end of a run (report_summary.lua).
Report.summary = summary.summary

-- Percentiles need samples: a p99 from fewer than 100 (fewer than one sample above it) or a
-- median from fewer than 10 is flagged wherever it is shown (docs/report.md).
M.MIN_SAMPLES = { p99 = 100, median = 10 }

-- The run's error and each failed machine's, one text (nil when nothing failed).
function Report:errors()
  local parts = {}
  if self.error then parts[#parts + 1] = self.error end
  for _, m in ipairs(self.machines) do
    if m.error and not (self.error and self.error:find(m.error, 1, true)) then parts[#parts + 1] = m.label .. " failed: " .. m.error end
  end
  return #parts > 0 and table.concat(parts, "\n") or nil
end

-- Whether the report has GPU samples of its own or of any machine.
function Report:has_gpu()
  if self.gpu then return true end
  for _, m in ipairs(self.machines) do if m.gpu then return true end end
  return false
end

-- The GPU samples taken so far by rep.gpu_sampler and each machine view's gpu_sampler, for
-- whoever has none added yet: sampler:results(), which neither stops nor waits (for a report
-- written at an unplanned ending: Ctrl-C, the watchdog).
function Report:collect_samples()
  if self.gpu_sampler and not self.gpu then
    local ok, res = pcall(function() return self.gpu_sampler:results() end)
    if ok and type(res) == "table" then self.gpu = res end
  end
  for _, m in ipairs(self.machines) do
    local view = self.machine_views[m.key]
    if view.gpu_sampler and not m.gpu then
      local ok, res = pcall(function() return view.gpu_sampler:results() end)
      if ok and type(res) == "table" then m.gpu = res end
    end
  end
end

-- Runs `body` (a scenario's measurements), then writes the report whatever happened: after an
-- error the GPU samples taken so far (from rep.gpu_sampler and each machine view's, while they
-- run) go in and the report says PARTIAL and why. `after(paths)` runs once the files are written
-- (to print a summary); then the error goes on, so the run still ends as failed.
function Report:run(body, after)
  local bad = checks.run(body, after)
  if bad then error(bad, 2) end
  local ok, err = pcall(body)
  if not ok then
    if self.gpu_sampler then pcall(function() self:add_gpu(self.gpu_sampler:stop()) end) end
    for _, m in ipairs(self.machines) do
      local view = self.machine_views[m.key]
      if view.gpu_sampler and not m.gpu then pcall(function() view:add_gpu(view.gpu_sampler:stop()) end) end
    end
    self:fail(tostring(err))
  end
  local paths = self:write()
  if after then after(paths) end
  if not ok then error(err, 0) end
  return paths
end

-- What write() writes: results.json's sections (doc) and the renderers' view of the report.
-- Pure: nothing is written (tests render the view themselves).
function Report:document()
  return document.build(self, M.MIN_SAMPLES)
end

-- The two reports' text: { md =, html = }.
function Report:render()
  local _, view = self:document()
  return { md = render.markdown(view), html = render.html(view, svg) }
end

-- Writes results.json's sections, report.md and report.html; never raises on partial data.
-- The machines' cost is read once, now: run.log says what the report states, beside the final
-- figure logged at teardown.
function Report:write()
  local doc, view = self:document()
  if doc.metadata.cost_usd ~= nil and finite(doc.metadata.cost_usd) then
    runara.log("report: machines' cost so far $" .. report_format.fixed("%.4f", doc.metadata.cost_usd) .. ", read at " ..
      report_format.fixed("%.1f", doc.metadata.cost_read_at_s or 0) .. " s as the report was written (before teardown; " ..
      "the final cost follows when the machines are destroyed)")
  end
  for _, key in ipairs(document.SECTIONS) do
    if doc[key] ~= nil then runara.result(key, doc[key]) end
  end
  for k, v in pairs(self.extra) do
    if not document.IS_SECTION[k] then runara.result(k, v) end
  end
  -- A renderer's failure must not cost the run its report: the files then say so, and results.json stands.
  local ok, md = pcall(render.markdown, view)
  if not ok then
    md = "# " .. render.md_escape(self.title) .. "\n\nThis report could not be rendered (" .. render.md_escape(md) ..
         "); results.json holds every figure.\n"
  end
  local ok2, html = pcall(render.html, view, svg)
  if not ok2 then
    html = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>" .. svg.escape(self.title) .. "</title></head><body><h1>" ..
           svg.escape(self.title) .. "</h1><p>This report could not be rendered (" .. svg.escape(html) ..
           "); results.json holds every figure.</p></body></html>\n"
  end
  runara.write_file("report.md", md)
  runara.write_file("report.html", html)
  local dir = runara.out_dir()
  return { json = dir .. "/results.json", md = dir .. "/report.md", html = dir .. "/report.html" }
end

return M
