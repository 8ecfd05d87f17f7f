-- runara.report: what a scenario measured, as results.json (seed 000 §5.1's layout, extended
-- with http_load's full metrics and the GPU summary), report.md (§5.2's comparison table) and
-- report.html (one self-contained file, charts as inline SVG). A run that failed halfway still
-- writes all three, saying PARTIAL and why. See docs/report.md.
--
--   local rep = report.new{ title = "Llama-3.3-70B FP8 on MI300X", simulated = runara.simulated,
--                           reference = "llama70b_fp8" }
--   rep:metadata{ gpu = "AMD Instinct MI300X", model = "...", framework = "vLLM 0.6.4" }
--   rep:add_load("throughput", http_load.run{...}, { kind = "throughput" })
--   rep:add_gpu(sampler:stop())
--   rep:write()   --> { json = ..., md = ..., html = ... }
--   rep:run(function() ... end, function(paths) print(paths.html) end)  -- writes even on an error
local svg = require("runara.report_svg")
local render = require("runara.report_render")
local references = require("runara.reference_numbers")

local M = {}
local Report = {}
Report.__index = Report

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
    tables = {}, extra = {}, phases = {}, billed = {}, started = runara.now(), started_unix = os.time(),
  }, Report)
end

function Report:metadata(fields)
  if type(fields) ~= "table" then fail(":metadata", "argument must be a table of fields") end
  for k, v in pairs(fields) do self.meta[tostring(k)] = v end
end

-- A droplet whose cost so far the report states (metadata.cost_usd, summed over every billed
-- droplet), read when the report is written: a report of a failed run states it too.
function Report:bill(d)
  if type(d) ~= "userdata" and type(d) ~= "table" then fail(":bill", "argument must be a droplet") end
  self.billed[#self.billed + 1] = d
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
  opts = opts or {}
  local kind = opts.kind or "load"
  if not KINDS[kind] then fail(":add_load", "option 'kind' must be throughput, latency, concurrent or load, got %s", tostring(kind)) end
  local entry = { name = tostring(name), kind = kind, concurrency = opts.concurrency or res.max_concurrency,
                  config = { max_tokens = opts.max_tokens, batch_size = opts.batch_size, prompt_length = opts.prompt_length },
                  m = summarize(res) }
  self.loads[#self.loads + 1] = entry
  return entry
end

function Report:add_sweep(name, list)
  if type(list) ~= "table" then fail(":add_sweep", "argument 'results' must be a list of http_load results") end
  local rows = {}
  for _, res in ipairs(list) do rows[#rows + 1] = summarize(res) end
  self.sweeps[#self.sweeps + 1] = { name = tostring(name), rows = rows }
end

function Report:add_gpu(res)
  if type(res) ~= "table" then fail(":add_gpu", "argument must be what a gpu_metrics sampler's stop() returns") end
  self.gpu = res
end

function Report:add_table(name, t)
  if type(t) ~= "table" or type(t.columns) ~= "table" or type(t.rows) ~= "table" then
    fail(":add_table", "argument must be { columns = {...}, rows = { {...}, ... } }")
  end
  self.tables[#self.tables + 1] = { name = tostring(name), columns = t.columns, rows = t.rows, caption = t.caption }
end

-- Free-form data at a dotted path of results.json ("benchmarks.mlperf").
function Report:set(path, value)
  local node, last = self.extra, nil
  for part in tostring(path):gmatch("[^%.]+") do
    if last then
      node[last] = type(node[last]) == "table" and node[last] or {}
      node = node[last]
    end
    last = part
  end
  if not last then fail(":set", "argument 'path' must be a dotted name such as benchmarks.mlperf") end
  node[last] = value
end

function Report:fail(message)
  self.error = tostring(message)
end

-- The measured figures, in §5.1's layout.
function Report:benchmarks()
  local b = { loads = {} }
  local gb = function(bytes) return bytes and math.floor(bytes / 1e9 * 10 + 0.5) / 10 end
  for _, l in ipairs(self.loads) do
    b.loads[l.name] = l.m
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
  local g = self.gpu
  if g and g.summary then
    local peak, total, maxw = g.summary.peak_vram_bytes, nil, nil
    for _, x in ipairs(g.summary.gpus or {}) do maxw = math.max(maxw or 0, x.max_power_w or 0) end
    total = g.static and g.static.vram_total_bytes
    b.memory = { vram_peak_gb = gb(peak), vram_total_gb = gb(total),
                 vram_utilization_pct = peak and total and total > 0 and math.floor(peak / total * 1000 + 0.5) / 10 or nil }
    for _, p in ipairs(g.phases or {}) do  -- steady use: while the first load ran
      if p.label:match("start$") and p.peak_vram_bytes then b.memory.vram_used_gb = gb(p.peak_vram_bytes) break end
    end
    b.memory.vram_used_gb = b.memory.vram_used_gb or b.memory.vram_peak_gb
    b.power = { avg_w = num(g.summary.mean_power_w), peak_w = maxw, energy_j = num(g.summary.energy_j),
                gpus = g.summary.gpus }
  end
  if #self.sweeps > 0 then b.sweep = self.sweeps[1].rows end
  return b
end

-- results.json's `comparable_nvidia` (seed 000 §5.1): this run's figures as ratios of the
-- reference's, and a sentence saying what they mean and where the reference comes from.
function Report:comparison(b)
  local ref = self.reference
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
  if #said > 0 then
    out.notes = string.format("%sagainst %s: %s (reference: %s)", self.simulated and "SIMULATED figures, " or "",
                              ref.label, table.concat(said, ", "), ref.source)
  end
  return out
end

local function merge(into, from)
  for k, v in pairs(from) do
    if type(v) == "table" and type(into[k]) == "table" then merge(into[k], v) else into[k] = v end
  end
end

-- A few lines for the terminal at the end of a run: the key figures and where the reports are.
function Report:summary(paths)
  local b, ref = self:benchmarks(), self.reference or {}
  local lines = { self.title .. (self.simulated and " (SIMULATED)" or "") .. (self.error and " (PARTIAL)" or "") }
  local function add(label, v, unit, r)
    if not finite(v) then return end
    lines[#lines + 1] = string.format("  %-22s %10.1f %-6s%s", label, v, unit, r and string.format("(%s ~%s)", ref.label, r) or "")
  end
  add("single-stream output", b.throughput and b.throughput.tokens_per_second, "tok/s", ref.throughput_tps)
  add("time to first token", b.latency and b.latency.time_to_first_token_ms, "ms", ref.ttft_ms)
  add("32 concurrent output", b.concurrent and b.concurrent["32_requests_tokens_per_second"], "tok/s", ref.concurrent_32_tps)
  add("peak GPU power", b.power and b.power.peak_w, "W", ref.power_w)
  add("peak VRAM", b.memory and b.memory.vram_peak_gb, "GB", ref.vram_gb)
  if paths then lines[#lines + 1] = "  report: " .. paths.html .. "  (also report.md, results.json)" end
  return table.concat(lines, "\n")
end

-- Runs `body` (a scenario's measurements), then writes the report whatever happened: after an
-- error the GPU samples taken so far (from rep.gpu_sampler, while one runs) go in and the report
-- says PARTIAL and why. `after(paths)` runs once the files are written (to print a summary);
-- then the error goes on, so the run still ends as failed (teardown destroys machines either way).
function Report:run(body, after)
  local ok, err = pcall(body)
  if not ok then
    if self.gpu_sampler then pcall(function() self:add_gpu(self.gpu_sampler:stop()) end) end
    self:fail(tostring(err))
  end
  local paths = self:write()
  if after then after(paths) end
  if not ok then error(err, 0) end
  return paths
end

-- results.json's own sections (seed 000 §5.1 and the report's status), in the order written;
-- rep:set adds sections of its own beside them.
local SECTIONS = { "metadata", "benchmarks", "comparable_nvidia", "report" }
local IS_SECTION = {}
for _, key in ipairs(SECTIONS) do IS_SECTION[key] = true end

-- What the billed droplets cost so far; one whose cost cannot be read counts 0.
function Report:billed_cost()
  local total = 0
  for _, d in ipairs(self.billed) do
    local ok, c = pcall(function() return d:cost() end)
    if ok and type(c) == "number" then total = total + c end
  end
  return total
end

-- Writes results.json's sections, report.md and report.html; never raises on partial data.
function Report:write()
  local b = self:benchmarks()
  local meta = { timestamp = os.date("!%Y-%m-%dT%H:%M:%SZ", self.started_unix), simulated = self.simulated }
  merge(meta, self.meta)
  if meta.cost_usd == nil and #self.billed > 0 then meta.cost_usd = self:billed_cost() end
  local doc = { metadata = meta, benchmarks = b, comparable_nvidia = self:comparison(b),
                report = { status = self.error and "partial" or "complete", error = self.error,
                           simulated = self.simulated, files = { "report.md", "report.html" } } }
  merge(doc, self.extra)
  for _, key in ipairs(SECTIONS) do
    if doc[key] ~= nil then runara.result(key, doc[key]) end
  end
  for k, v in pairs(self.extra) do
    if not IS_SECTION[k] then runara.result(k, v) end
  end
  local view = { title = self.title, simulated = self.simulated, error = self.error, meta = meta, b = b,
                 comparable = doc.comparable_nvidia, reference = self.reference, loads = self.loads, sweeps = self.sweeps,
                 gpu = self.gpu, tables = self.tables, phases = self.phases }
  runara.write_file("report.md", render.markdown(view))
  runara.write_file("report.html", render.html(view, svg))
  local dir = runara.out_dir()
  return { json = dir .. "/results.json", md = dir .. "/report.md", html = dir .. "/report.html" }
end

return M
