-- runara.report: what a scenario measured, as results.json (the Runara plan's results layout,
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
local svg = require("runara.report_svg")
local render = require("runara.report_render")
local references = require("runara.reference_numbers")

local M = {}
local Report = {}
Report.__index = Report
local Machine = {}
Machine.__index = Machine

local KINDS = { throughput = true, latency = true, concurrent = true, load = true }

local function fail(fn, fmt, ...) error("report" .. fn .. ": " .. string.format(fmt, ...), 3) end

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end
local function num(v) return finite(v) and v or nil end

function M.new(opts)
  opts = opts or {}
  if type(opts) ~= "table" then fail(".new", "options must be a table, got %s", type(opts)) end
  if opts.reference ~= nil and not references[opts.reference] then
    fail(".new", "unknown reference '%s' (see stdlib/runara/reference_numbers.lua)", tostring(opts.reference))
  end
  return setmetatable({
    title = tostring(opts.title or "Runara report"), simulated = opts.simulated and true or false,
    reference = opts.reference and references[opts.reference], meta = {}, loads = {}, sweeps = {},
    tables = {}, extra = {}, phases = {}, billed = {}, machines = {}, machine_views = {}, files = {},
    started = runara.now(), started_unix = os.time(),
  }, Report)
end

function Report:metadata(fields)
  if type(fields) ~= "table" then fail(":metadata", "argument must be a table of fields") end
  for k, v in pairs(fields) do self.meta[tostring(k)] = v end
end

-- Option tables may name the machine (rep:machine's key) the data belongs to; its record, or
-- nil. Errors point at the line that called the report's method (level 3 from here).
local function machine_opt(self, fn, opts)
  if opts ~= nil and type(opts) ~= "table" then error("report" .. fn .. ": options must be a table, got " .. type(opts), 3) end
  local key = opts and opts.machine
  if key == nil then return nil end
  local m = self.machines[self.machine_index and self.machine_index[key] or 0]
  if not m then
    error(string.format("report%s: option 'machine': no machine '%s' (declare it first with rep:machine(\"%s\", { label = ... }))",
      fn, tostring(key), tostring(key)), 3)
  end
  return m
end

-- A droplet whose cost so far the report states (metadata.cost_usd, summed over every billed
-- droplet, each counted once), read when the report is written: a report of a failed run states it too.
function Report:bill(d, opts)
  if type(d) ~= "userdata" and type(d) ~= "table" then fail(":bill", "argument must be a droplet") end
  local m = machine_opt(self, ":bill", opts)
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
  "request_goodput", "energy_j", "mean_power_w", "peak_vram_bytes", "output_tokens_per_joule", "label",
  "load_host", "controller_rtt_ms" }

local function summarize(res)
  local s = {}
  for _, k in ipairs(FIELDS) do
    local v = res[k]
    if type(v) == "number" then s[k] = num(v) elseif type(v) == "string" then s[k] = v end
  end
  if type(res.errors_by_kind) == "table" then s.errors_by_kind = res.errors_by_kind end
  return s
end

function Report:add_load(name, res, opts)
  if type(res) ~= "table" then fail(":add_load", "argument 'result' must be an http_load.run result, got %s", type(res)) end
  local m = machine_opt(self, ":add_load", opts)
  opts = opts or {}
  local kind = opts.kind or "load"
  if not KINDS[kind] then fail(":add_load", "option 'kind' must be throughput, latency, concurrent or load, got %s", tostring(kind)) end
  local entry = { name = tostring(name), kind = kind, concurrency = opts.concurrency or res.max_concurrency,
                  machine = m and m.key,
                  config = { max_tokens = opts.max_tokens, batch_size = opts.batch_size, prompt_length = opts.prompt_length },
                  m = summarize(res) }
  self.loads[#self.loads + 1] = entry
  return entry
end

-- A sweep's table as files, like http_load's own for a list of concurrencies (same columns):
-- NAME.json (a list, one object per point) and NAME.csv.
local SWEEP_COLUMNS = { "label", "load_model", "max_concurrency", "request_rate", "num_prompts", "completed", "failed",
  "duration", "request_throughput", "request_goodput", "output_throughput", "total_token_throughput",
  "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms",
  "mean_itl_ms", "median_itl_ms", "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms",
  "max_concurrent_requests", "total_input_tokens", "total_output_tokens" }

local function csv_cell(v)
  if v == nil then return "" end
  if type(v) == "number" then
    if not finite(v) then return "" end
    if v == math.floor(v) and math.abs(v) < 2^53 then return string.format("%d", v) end
    return string.format("%.12g", v)
  end
  local text = tostring(v)
  if not text:find('[,"\r\n]') then return text end
  return '"' .. text:gsub('"', '""') .. '"'
end

-- A sweep's rows as written to NAME.json, and its CSV text (pure).
function M.sweep_table(list)
  local rows, lines = {}, { table.concat(SWEEP_COLUMNS, ",") .. ",thresholds_crossed" }
  for _, res in ipairs(list) do
    if type(res) == "table" then
      local row, cells = {}, {}
      for _, c in ipairs(SWEEP_COLUMNS) do
        local v = res[c]
        if type(v) == "number" and not finite(v) then v = nil end
        if type(v) ~= "number" and type(v) ~= "string" then v = nil end
        row[c] = v
        cells[#cells + 1] = csv_cell(v)
      end
      row.thresholds_crossed = type(res.thresholds_crossed) == "table" and #res.thresholds_crossed or 0
      cells[#cells + 1] = tostring(row.thresholds_crossed)
      rows[#rows + 1] = row
      lines[#lines + 1] = table.concat(cells, ",")
    end
  end
  return rows, table.concat(lines, "\n") .. "\n"
end

local function write_sweep_files(base, list)
  local rows, csv = M.sweep_table(list)
  runara.write_file(base .. ".json", rows)
  runara.write_file(base .. ".csv", csv)
end

-- Options: machine, files (false: no NAME.json / NAME.csv).
function Report:add_sweep(name, list, opts)
  if type(list) ~= "table" then fail(":add_sweep", "argument 'results' must be a list of http_load results") end
  local m = machine_opt(self, ":add_sweep", opts)
  local rows = {}
  for _, res in ipairs(list) do if type(res) == "table" then rows[#rows + 1] = summarize(res) end end
  local sweep = { name = tostring(name), rows = rows, machine = m and m.key }
  self.sweeps[#self.sweeps + 1] = sweep
  if not (opts and opts.files == false) and #rows > 0 then
    local base = ((m and (m.key .. "_") or "") .. sweep.name):gsub("[^%w_%-%.]", "_")
    if base == "results" or base == "report" then base = base .. "_sweep" end
    local ok = pcall(write_sweep_files, base, list)
    if ok then
      sweep.files = { base .. ".json", base .. ".csv" }
      self:add_file(base .. ".csv", "the sweep's table, one row per point")
      self:add_file(base .. ".json", "the same rows as JSON")
    end
  end
end

function Report:add_gpu(res, opts)
  if type(res) ~= "table" then fail(":add_gpu", "argument must be what a gpu_metrics sampler's stop() returns") end
  local m = machine_opt(self, ":add_gpu", opts)
  if m then m.gpu = res else self.gpu = res end
end

-- What a metrics.start sampler's stop() returned (vLLM's /metrics over the run): charted
-- (requests running and waiting, KV-cache use) and summarised; results.json's benchmarks.vllm_metrics.
function Report:add_server_metrics(res, opts)
  if type(res) ~= "table" then fail(":add_server_metrics", "argument must be what a metrics sampler's stop() returns") end
  local m = machine_opt(self, ":add_server_metrics", opts)
  if m then m.server_metrics = res else self.server_metrics = res end
end

function Report:add_table(name, t, opts)
  if type(t) ~= "table" or type(t.columns) ~= "table" or type(t.rows) ~= "table" then
    fail(":add_table", "argument must be { columns = {...}, rows = { {...}, ... } }")
  end
  local m = machine_opt(self, ":add_table", opts)
  self.tables[#self.tables + 1] = { name = tostring(name), columns = t.columns, rows = t.rows, caption = t.caption,
                                    machine = m and m.key }
end

-- A file the scenario wrote into the output folder, listed (with what it holds) in the reports' footer.
function Report:add_file(path, what)
  if type(path) ~= "string" or path == "" then fail(":add_file", "argument 'path' must be a path in the output folder") end
  for _, f in ipairs(self.files) do if f.path == path then f.what = what and tostring(what) or f.what return end end
  self.files[#self.files + 1] = { path = path, what = what and tostring(what) }
end

-- Free-form data at a dotted path of results.json ("benchmarks.mlperf").
local function set_path(root, path, value)
  local node, last = root, nil
  for part in tostring(path):gmatch("[^%.]+") do
    if last then
      node[last] = type(node[last]) == "table" and node[last] or {}
      node = node[last]
    end
    last = part
  end
  if not last then return false end
  node[last] = value
  return true
end

function Report:set(path, value)
  if not set_path(self.extra, path, value) then fail(":set", "argument 'path' must be a dotted name such as benchmarks.mlperf") end
end

function Report:fail(message)
  self.error = tostring(message)
end

---------------------------------------------------------------------------------------------------
-- Machines: rep:machine(key, {label =}) → a view with the report's methods, for that machine.

-- Declares a machine of the report (or returns the one declared under `key`). Options: label
-- (what tables and charts call it; default the key), and any metadata (gpu, size, ...).
function Report:machine(key, opts)
  if type(key) ~= "string" or not key:match("^[%w_%-%.]+$") then
    fail(":machine", "argument 'key' must be a name of letters, digits, '_', '-' or '.', got %s", tostring(key))
  end
  if opts ~= nil and type(opts) ~= "table" then fail(":machine", "options must be a table, got %s", type(opts)) end
  self.machine_index = self.machine_index or {}
  local m = self.machines[self.machine_index[key] or 0]
  if not m then
    m = { key = key, label = key, meta = {}, billed = {}, phases = {}, extra = {} }
    self.machines[#self.machines + 1] = m
    self.machine_index[key] = #self.machines
    self.machine_views[key] = setmetatable({ report = self, key = key, record = m }, Machine)
  end
  for k, v in pairs(opts or {}) do
    if k == "label" then m.label = tostring(v) else m.meta[tostring(k)] = v end
  end
  return self.machine_views[key]
end

function Machine:metadata(fields)
  if type(fields) ~= "table" then fail(":metadata", "argument must be a table of fields") end
  for k, v in pairs(fields) do self.record.meta[tostring(k)] = v end
end
function Machine:bill(d) return self.report:bill(d, { machine = self.key }) end
function Machine:phase(name)
  name = tostring(name)
  local r = self.record
  r.phases[#r.phases + 1] = { name = name, t_s = runara.now() - self.report.started }
  if self.gpu_sampler then pcall(function() self.gpu_sampler:mark(name) end) end
end
local function with_machine(self, opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.machine = self.key
  return o
end
function Machine:add_load(name, res, opts)
  if opts ~= nil and type(opts) ~= "table" then fail(":add_load", "options must be a table, got %s", type(opts)) end
  return self.report:add_load(name, res, with_machine(self, opts))
end
function Machine:add_sweep(name, list, opts) return self.report:add_sweep(name, list, with_machine(self, opts)) end
function Machine:add_gpu(res) return self.report:add_gpu(res, { machine = self.key }) end
function Machine:add_server_metrics(res) return self.report:add_server_metrics(res, { machine = self.key }) end
function Machine:add_table(name, t) return self.report:add_table(name, t, { machine = self.key }) end
function Machine:add_file(path, what) return self.report:add_file(path, what) end
-- results.json's machines.KEY.PATH.
function Machine:set(path, value)
  if not set_path(self.record.extra, path, value) then fail(":set", "argument 'path' must be a dotted name such as benchmarks.mlperf") end
end
-- This machine failed: its column says so, the report is PARTIAL; the other machines' results stay.
function Machine:fail(message) self.record.error = tostring(message) end
-- Runs body(view) for this machine; an error is kept as the machine's failure (with the GPU
-- samples taken so far) instead of ending the run. Returns true and body's value, or false and the error.
function Machine:run(body)
  local ok, res = pcall(body, self)
  if not ok then
    if self.gpu_sampler then
      pcall(function() self:add_gpu(self.gpu_sampler:stop()) end)
      self.gpu_sampler = nil
    end
    self:fail(res)
  end
  return ok, res
end

---------------------------------------------------------------------------------------------------
-- The figures.

local function gb(bytes) return bytes and math.floor(bytes / 1e9 * 10 + 0.5) / 10 end

-- One machine's figures (or the report's own, for a one-machine run) in the plan's layout.
local function layout(loads, gpu)
  local b = {}
  for _, l in ipairs(loads) do
    if l.kind == "throughput" and not b.throughput then
      b.throughput = { tokens_per_second = l.m.output_throughput, test_config = l.config,
                       inter_token_latency_ms = l.m.median_itl_ms }
    elseif l.kind == "latency" and not b.latency then
      b.latency = { time_to_first_token_ms = l.m.median_ttft_ms, time_to_first_token_p99_ms = l.m.p99_ttft_ms }
    elseif l.kind == "concurrent" then
      b.concurrent = b.concurrent or {}
      b.concurrent[tostring(l.concurrency) .. "_requests_tokens_per_second"] = l.m.output_throughput
    end
  end
  if b.latency and b.throughput then b.latency.inter_token_latency_ms = b.throughput.inter_token_latency_ms end
  local g = gpu
  if type(g) == "table" and type(g.summary) == "table" then
    local peak, total, maxw = num(g.summary.peak_vram_bytes), nil, nil
    for _, x in ipairs(g.summary.gpus or {}) do
      if finite(x.max_power_w) then maxw = math.max(maxw or 0, x.max_power_w) end
    end
    total = g.static and num(g.static.vram_total_bytes)
    b.memory = { vram_peak_gb = gb(peak), vram_total_gb = gb(total),
                 vram_utilization_pct = peak and total and total > 0 and math.floor(peak / total * 1000 + 0.5) / 10 or nil }
    for _, p in ipairs(g.phases or {}) do  -- steady use: while the first load ran
      if tostring(p.label):match("start$") and p.peak_vram_bytes then b.memory.vram_used_gb = gb(num(p.peak_vram_bytes)) break end
    end
    b.memory.vram_used_gb = b.memory.vram_used_gb or b.memory.vram_peak_gb
    b.power = { avg_w = num(g.summary.mean_power_w), peak_w = maxw, energy_j = num(g.summary.energy_j),
                gpus = g.summary.gpus }
  end
  return b
end

local function loads_of(self, key)
  local out = {}
  for _, l in ipairs(self.loads) do if l.machine == key then out[#out + 1] = l end end
  return out
end

local function label_of(self, key)
  local m = self.machines[self.machine_index and self.machine_index[key] or 0]
  return m and m.label or key
end

-- The measured figures, in the plan's layout; with machines, each one's under benchmarks.machines.KEY.
function Report:benchmarks()
  local b = layout(loads_of(self, nil), self.gpu)
  b.loads = {}
  for _, l in ipairs(self.loads) do
    b.loads[l.machine and (label_of(self, l.machine) .. " " .. l.name) or l.name] = l.m
  end
  for _, s in ipairs(self.sweeps) do
    if not s.machine and not b.sweep then b.sweep = s.rows end
  end
  if self.server_metrics then b.vllm_metrics = self.server_metrics.summary end
  if #self.machines > 0 then
    b.machines = {}
    for _, m in ipairs(self.machines) do
      local bm = layout(loads_of(self, m.key), m.gpu)
      for _, s in ipairs(self.sweeps) do
        if s.machine == m.key and not bm.sweep then bm.sweep = s.rows end
      end
      if m.server_metrics then bm.vllm_metrics = m.server_metrics.summary end
      b.machines[m.key] = bm
    end
  end
  return b
end

-- The reference, when it applies to this run: one machine, and the reference's own model and
-- quantization (a report whose metadata names another model gets no reference comparison).
function Report:applicable_reference()
  local ref = self.reference
  if not ref or #self.machines > 0 then return nil end
  local model, q = self.meta.model, self.meta.quantization
  if ref.model and model ~= nil and tostring(model) ~= ref.model then return nil end
  if ref.quantization and q ~= nil and tostring(q):upper() ~= ref.quantization:upper() then return nil end
  return ref
end

-- results.json's `comparable_nvidia` (the plan's layout): this run's figures as ratios of the
-- reference's, and a sentence saying what they mean and where the reference comes from.
function Report:comparison(b)
  local ref = self:applicable_reference()
  if not ref then return nil end
  local function ratio(a, r) return a and r and r > 0 and math.floor(a / r * 100 + 0.5) / 100 or nil end
  local c32 = b.concurrent and b.concurrent["32_requests_tokens_per_second"]
  local out = { reference = ref.label, source = ref.source,
                h100_equivalent_throughput_ratio = ratio(b.throughput and b.throughput.tokens_per_second, ref.throughput_tps),
                ttft_ratio = ratio(b.latency and b.latency.time_to_first_token_ms, ref.ttft_ms),
                concurrent_32_ratio = ratio(c32, ref.concurrent_32_tps), simulated = self.simulated }
  local said = {}
  if out.h100_equivalent_throughput_ratio then
    said[#said + 1] = string.format("%.2fx the single-stream throughput", out.h100_equivalent_throughput_ratio)
  end
  if out.concurrent_32_ratio then said[#said + 1] = string.format("%.2fx the 32-concurrent throughput", out.concurrent_32_ratio) end
  if out.ttft_ratio then said[#said + 1] = string.format("%.2fx the time to first token", out.ttft_ratio) end
  local vram = b.memory and b.memory.vram_peak_gb
  if vram and ref.vram_gb then
    said[#said + 1] = string.format("a VRAM peak of %.0f GB against its ~%.0f GB", vram, ref.vram_gb)
  end
  if #said == 0 then return nil end
  out.notes = string.format("%sagainst %s: %s (reference: %s)", self.simulated and "SIMULATED figures, " or "",
                            ref.label, table.concat(said, ", "), ref.source)
  return out
end

-- What the droplets in `list` cost so far, each counted once (`seen`); one whose cost cannot be read counts 0.
local function cost_of(list, seen)
  local total, any = 0, false
  for _, d in ipairs(list) do
    if not seen[d] then
      seen[d] = true
      local ok, c = pcall(function() return d:cost() end)
      if ok and finite(c) then total, any = total + c, true end
    end
  end
  return total, any
end

function Report:billed_cost()
  local seen = {}
  local total = 0
  for _, m in ipairs(self.machines) do total = total + cost_of(m.billed, seen) end
  return total + cost_of(self.billed, seen)
end

-- Each machine's metadata, cost and status (results.json's `machines`).
local function machine_records(self)
  local out, seen = {}, {}
  for _, m in ipairs(self.machines) do
    local rec = { label = m.label, status = m.error and "failed" or "complete", error = m.error }
    for k, v in pairs(m.meta) do rec[k] = v end
    if rec.cost_usd == nil and #m.billed > 0 then
      local c, any = cost_of(m.billed, seen)
      if any then rec.cost_usd = c end
    end
    for k, v in pairs(m.extra) do if rec[k] == nil then rec[k] = v end end
    out[#out + 1] = rec
  end
  return out
end

-- Percentiles need samples: a p99 from fewer than 100 (fewer than one sample above it) or a
-- median from fewer than 10 is flagged wherever it is shown (docs/report.md).
M.MIN_SAMPLES = { p99 = 100, median = 10 }

-- The comparison of several machines: one row per figure any of them measured.
local function machine_comparison(self, b, recs)
  local keys, labels = {}, {}
  for i, m in ipairs(self.machines) do keys[i], labels[i] = m.key, m.label end
  local rows = {}
  local function add(metric, id, get, better, digits)
    local values, samples, any = {}, {}, false
    for i, m in ipairs(self.machines) do
      local v, n = get(m, b.machines[m.key] or {}, recs[i])
      if finite(v) then values[m.key], samples[m.key], any = v, n, true end
    end
    if not any then return end
    local r = { metric = metric, id = id, values = values, samples = samples, better = better, digits = digits }
    if #keys == 2 then
      local x, y = values[keys[1]], values[keys[2]]
      if x and y and y ~= 0 then r.ratio = math.floor(x / y * 1000 + 0.5) / 1000 end
    end
    rows[#rows + 1] = r
  end
  local function load_where(m, pred)
    for _, l in ipairs(self.loads) do if l.machine == m.key and pred(l) then return l end end
  end
  local function kind(k) return function(l) return l.kind == k end end
  add("single-stream throughput (tok/s)", "single_stream_tps", function(m, bm) return bm.throughput and bm.throughput.tokens_per_second end, "higher")
  add("ITL median, single stream (ms)", "single_stream_itl_ms", function(m, bm) return bm.throughput and bm.throughput.inter_token_latency_ms end, "lower")
  add("TTFT median (ms)", "ttft_median_ms", function(m)
    local l = load_where(m, kind("latency"))
    return l and l.m.median_ttft_ms, l and (l.m.count_ttft or l.m.completed)
  end, "lower")
  add("TTFT p99 (ms)", "ttft_p99_ms", function(m)
    local l = load_where(m, kind("latency"))
    return l and l.m.p99_ttft_ms, l and (l.m.count_ttft or l.m.completed)
  end, "lower")
  local levels, seen = {}, {}
  for _, l in ipairs(self.loads) do
    if l.machine and l.kind == "concurrent" and finite(l.concurrency) and not seen[l.concurrency] then
      seen[l.concurrency] = true
      levels[#levels + 1] = l.concurrency
    end
  end
  table.sort(levels)
  for _, c in ipairs(levels) do
    local function at(m) return load_where(m, function(l) return l.kind == "concurrent" and l.concurrency == c end) end
    add(string.format("throughput at %d concurrent (tok/s)", c), "concurrent_" .. c .. "_tps", function(m)
      local l = at(m) return l and l.m.output_throughput end, "higher")
  end
  local top = levels[#levels]
  if top then
    local function at(m) return load_where(m, function(l) return l.kind == "concurrent" and l.concurrency == top end) end
    add(string.format("ITL median at %d concurrent (ms)", top), "concurrent_" .. top .. "_itl_ms", function(m)
      local l = at(m) return l and l.m.median_itl_ms end, "lower")
    add(string.format("TTFT p99 at %d concurrent (ms)", top), "concurrent_" .. top .. "_ttft_p99_ms", function(m)
      local l = at(m) return l and l.m.p99_ttft_ms, l and (l.m.count_ttft or l.m.completed) end, "lower")
    add(string.format("output tokens per joule at %d concurrent", top), "concurrent_" .. top .. "_tokens_per_joule", function(m)
      local l = at(m) return l and l.m.output_tokens_per_joule end, "higher")
    add(string.format("USD per million output tokens at %d concurrent", top), "concurrent_" .. top .. "_usd_per_mtok", function(m)
      local l, h = at(m), m.meta.hourly_usd
      if l and finite(l.m.output_throughput) and l.m.output_throughput > 0 and finite(h) then
        return h / (l.m.output_throughput * 3600) * 1e6
      end
    end, "lower", 2)
  end
  add("highest sweep throughput (tok/s)", "sweep_peak_tps", function(m, bm)
    local best
    for _, row in ipairs(bm.sweep or {}) do
      if finite(row.output_throughput) then best = math.max(best or 0, row.output_throughput) end
    end
    return best
  end, "higher")
  add("peak VRAM (GB)", "vram_peak_gb", function(m, bm) return bm.memory and bm.memory.vram_peak_gb end, nil)
  add("peak power (W)", "power_peak_w", function(m, bm) return bm.power and bm.power.peak_w end, nil)
  add("GPU energy, whole sampling (J)", "gpu_energy_j", function(m, bm) return bm.power and bm.power.energy_j end, nil)
  add("price (USD/h)", "hourly_usd", function(m) return m.meta.hourly_usd end, "lower", 2)
  add("machine cost (USD)", "cost_usd", function(m, bm, rec) return rec and rec.cost_usd end, nil, 4)
  if #rows == 0 then return nil end
  return { machines = keys, labels = labels, rows = rows,
           ratio = #keys == 2 and (labels[1] .. " / " .. labels[2]) or nil }
end

-- results.json's `comparison` (machine figures side by side) from the renderers' rows.
local function comparison_json(cmp)
  if not cmp then return nil end
  local out = { machines = cmp.machines, ratio_of = cmp.ratio, metrics = {} }
  for _, r in ipairs(cmp.rows) do
    out.metrics[r.id] = { metric = r.metric, values = r.values, ratio = r.ratio, better = r.better }
  end
  return out
end

-- With an NVIDIA machine measured beside another one, results.json's comparable_nvidia holds the
-- other's figures as ratios of the measured NVIDIA machine's (not of an estimate).
local function measured_nvidia(self, cmp)
  if not cmp or #self.machines ~= 2 then return nil end
  local a, n = self.machines[1], self.machines[2]
  local function nvidia(m) return tostring(m.meta.gpu or ""):match("NVIDIA") or tostring(m.meta.gpu_backend or ""):match("nvidia") end
  if not nvidia(n) or nvidia(a) then return nil end
  local by = {}
  for _, r in ipairs(cmp.rows) do by[r.id] = r.ratio end
  local out = { reference = n.label .. " measured in this run", source = "this run (" .. a.label .. " and " .. n.label .. " at the same time, same suite)",
                h100_equivalent_throughput_ratio = by.single_stream_tps, ttft_ratio = by.ttft_median_ms,
                concurrent_32_ratio = by.concurrent_32_tps, simulated = self.simulated }
  local said = {}
  if out.h100_equivalent_throughput_ratio then said[#said + 1] = string.format("%.2fx the single-stream throughput", out.h100_equivalent_throughput_ratio) end
  if out.concurrent_32_ratio then said[#said + 1] = string.format("%.2fx the 32-concurrent throughput", out.concurrent_32_ratio) end
  if out.ttft_ratio then said[#said + 1] = string.format("%.2fx the time to first token", out.ttft_ratio) end
  if #said == 0 then return nil end
  out.notes = string.format("%s%s against %s: %s", self.simulated and "SIMULATED figures, " or "", a.label, out.reference, table.concat(said, ", "))
  return out
end

local function merge(into, from)
  for k, v in pairs(from) do
    if type(v) == "table" and type(into[k]) == "table" then merge(into[k], v) else into[k] = v end
  end
end

-- The run's error and each failed machine's, one text (nil when nothing failed).
function Report:errors()
  local parts = {}
  if self.error then parts[#parts + 1] = self.error end
  for _, m in ipairs(self.machines) do
    if m.error and not (self.error and self.error:find(m.error, 1, true)) then parts[#parts + 1] = m.label .. " failed: " .. m.error end
  end
  return #parts > 0 and table.concat(parts, "\n") or nil
end

-- A few lines for the terminal at the end of a run: the key figures and where the reports are.
function Report:summary(paths)
  local b = self:benchmarks()
  local ref = self:applicable_reference() or {}
  local lines = { self.title .. (self.simulated and " (SIMULATED)" or "") .. (self:errors() and " (PARTIAL)" or "") }
  if #self.machines > 0 then
    local recs = machine_records(self)
    local cmp = machine_comparison(self, b, recs)
    local head = string.format("  %-44s", "")
    for _, m in ipairs(self.machines) do head = head .. string.format(" %12s", m.label:sub(1, 12)) end
    lines[#lines + 1] = head
    for _, r in ipairs(cmp and cmp.rows or {}) do
      local line = string.format("  %-44s", r.metric)
      for _, m in ipairs(self.machines) do
        local v = r.values[m.key]
        line = line .. (v and string.format(" %12.4g", v) or string.format(" %12s", m.error and "failed" or "-"))
      end
      lines[#lines + 1] = line
    end
    for _, m in ipairs(self.machines) do
      if m.error then lines[#lines + 1] = "  " .. m.label .. " failed: " .. m.error:match("^[^\n]*") end
    end
  else
    local function add(label, v, unit, r)
      if not finite(v) then return end
      lines[#lines + 1] = string.format("  %-22s %10.1f %-6s%s", label, v, unit, r and string.format("(%s ~%s)", ref.label, r) or "")
    end
    add("single-stream output", b.throughput and b.throughput.tokens_per_second, "tok/s", ref.throughput_tps)
    add("time to first token", b.latency and b.latency.time_to_first_token_ms, "ms", ref.ttft_ms)
    add("32 concurrent output", b.concurrent and b.concurrent["32_requests_tokens_per_second"], "tok/s", ref.concurrent_32_tps)
    add("peak GPU power", b.power and b.power.peak_w, "W", ref.power_w)
    add("peak VRAM", b.memory and b.memory.vram_peak_gb, "GB", ref.vram_gb)
  end
  if paths then lines[#lines + 1] = "  report: " .. paths.html .. "  (also report.md, results.json)" end
  return table.concat(lines, "\n")
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

-- results.json's own sections (the plan's and the report's status), in the order written;
-- rep:set adds sections of its own beside them.
local SECTIONS = { "metadata", "machines", "benchmarks", "comparison", "comparable_nvidia", "report" }
local IS_SECTION = {}
for _, key in ipairs(SECTIONS) do IS_SECTION[key] = true end

-- What write() writes: results.json's sections (doc) and the renderers' view of the report.
-- Pure: nothing is written (tests render the view themselves).
function Report:document()
  local b = self:benchmarks()
  local meta = { timestamp = os.date("!%Y-%m-%dT%H:%M:%SZ", self.started_unix), simulated = self.simulated }
  merge(meta, self.meta)
  local billed_any = #self.billed > 0
  for _, m in ipairs(self.machines) do billed_any = billed_any or #m.billed > 0 end
  if meta.cost_usd == nil and billed_any then meta.cost_usd = self:billed_cost() end
  local recs = machine_records(self)
  local cmp = #self.machines > 0 and machine_comparison(self, b, recs) or nil
  local errors = self:errors()
  local machines_json
  if #recs > 0 then
    machines_json = {}
    for i, m in ipairs(self.machines) do machines_json[m.key] = recs[i] end
  end
  local doc = { metadata = meta, machines = machines_json, benchmarks = b, comparison = comparison_json(cmp),
                comparable_nvidia = self:comparison(b) or measured_nvidia(self, cmp),
                report = { status = errors and "partial" or "complete", error = errors,
                           simulated = self.simulated, files = { "report.md", "report.html" } } }
  merge(doc, self.extra)
  local machines = {}
  for i, m in ipairs(self.machines) do
    machines[i] = { key = m.key, label = m.label, meta = recs[i], gpu = m.gpu, server_metrics = m.server_metrics,
                    error = m.error, phases = m.phases }
  end
  local view = { title = self.title, simulated = self.simulated, error = errors, meta = meta, b = b,
                 comparable = doc.comparable_nvidia, reference = self:applicable_reference(), loads = self.loads,
                 sweeps = self.sweeps, gpu = self.gpu, server_metrics = self.server_metrics,
                 vllm_summary = not self.server_metrics and type(b.vllm_metrics) == "table" and b.vllm_metrics or nil,
                 tables = self.tables, phases = self.phases, machines = machines, compare = cmp, files = self.files,
                 min_samples = M.MIN_SAMPLES }
  return doc, view
end

-- The two reports' text: { md =, html = }.
function Report:render()
  local _, view = self:document()
  return { md = render.markdown(view), html = render.html(view, svg) }
end

-- Writes results.json's sections, report.md and report.html; never raises on partial data.
function Report:write()
  local doc, view = self:document()
  for _, key in ipairs(SECTIONS) do
    if doc[key] ~= nil then runara.result(key, doc[key]) end
  end
  for k, v in pairs(self.extra) do
    if not IS_SECTION[k] then runara.result(k, v) end
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
