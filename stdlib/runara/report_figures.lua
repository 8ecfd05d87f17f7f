-- runara.report_figures: what a report measured, in runara's layout (results.json's
-- benchmarks), the reference comparison (comparable_nvidia) and what the machines cost. Each
-- function is a report's method (self: the report). See report.lua.
local M = {}

local report_format = require("runara.report_format")
local efficiency = require("runara.report_efficiency")
local finite, num, fixed = report_format.finite, report_format.num, report_format.fixed

-- Memory: _gb keys (the plan's layout) are 10^9 bytes, _gib keys 2^30 bytes (what the reports
-- show, labelled GiB); both rounded to 0.1. docs/report.md#units.
local function gb(bytes) return bytes and math.floor(bytes / 1e9 * 10 + 0.5) / 10 end
local function gib(bytes) return bytes and math.floor(bytes / 2^30 * 10 + 0.5) / 10 end

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
    b.memory = { vram_peak_gb = gb(peak), vram_total_gb = gb(total), vram_peak_gib = gib(peak), vram_total_gib = gib(total),
                 vram_utilization_pct = peak and total and total > 0 and math.floor(peak / total * 1000 + 0.5) / 10 or nil }
    local used
    for _, p in ipairs(g.phases or {}) do  -- steady use: while the first load ran
      if tostring(p.label):match("start$") and p.peak_vram_bytes then used = num(p.peak_vram_bytes) break end
    end
    used = used or peak
    b.memory.vram_used_gb, b.memory.vram_used_gib = gb(used), gib(used)
    b.power = { avg_w = num(g.summary.mean_power_w), peak_w = maxw, energy_j = num(g.summary.energy_j),
                energy_source = g.summary.energy_source, energy_note = g.summary.energy_note, gpus = g.summary.gpus }
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

local function copy(t, extra)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  for k, v in pairs(extra or {}) do out[k] = v end
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

-- The machines' costs, read once (a droplet's cost grows by the second: every figure of one
-- report uses the same reading). own: the report's own droplets'; machines[KEY]: each machine's
-- (nil when nothing of it was billed); total: all of them; read_at_s: seconds into the run.
function M.read_costs(self)
  local seen, costs = {}, { machines = {}, read_at_s = runara.now() - self.started }
  local total, any_total = 0, false
  for _, m in ipairs(self.machines) do
    local c, any = cost_of(m.billed, seen)
    if any then costs.machines[m.key] = c end
    total, any_total = total + c, any_total or any
  end
  local own, any_own = cost_of(self.billed, seen)
  if any_own then costs.own = own end
  costs.total = total + own
  costs.any = any_total or any_own
  return costs
end

-- Each load's and sweep point's cost and efficiency figures on one machine (key nil: the
-- report's own), and that machine's headline. `meta`: its metadata (hourly_usd, gpu_count,
-- cost_usd); `cost`: what it cost so far (nil when unknown). Returns { [entry] = figures }, headline.
local function machine_efficiency(self, key, meta, cost)
  local entries, list = {}, {}
  for _, l in ipairs(self.loads) do
    if l.machine == key then entries[#entries + 1] = { name = l.name, m = l.m, kind = l.kind, load = l } end
  end
  for _, s in ipairs(self.sweeps) do
    if s.machine == key then
      for i, row in ipairs(s.rows) do entries[#entries + 1] = { name = row.label or (s.name .. " " .. i), m = row, kind = "sweep", row = row } end
    end
  end
  for i, e in ipairs(entries) do list[i] = e.m end
  if finite(meta.cost_usd) then cost = meta.cost_usd end
  local shares = efficiency.shares(list, cost)
  local ctx = { hourly_usd = meta.hourly_usd, gpu_count = meta.gpu_count }
  for i, e in ipairs(entries) do
    ctx.share = shares[i]
    e.f = efficiency.load_figures(e.m, ctx)
  end
  return entries, efficiency.headline(entries, { hourly_usd = meta.hourly_usd, gpu_count = meta.gpu_count, cost_usd = cost })
end

-- Every load's and sweep point's cost and efficiency, on each machine: { load = {entry → figures},
-- row = {row → figures}, headline = {key or "" → headline} }. `costs`: read_costs(self).
function M.efficiency(self, costs)
  costs = costs or M.read_costs(self)
  local out = { load = {}, row = {}, headline = {} }
  local function take(key, meta, cost)
    local entries, head = machine_efficiency(self, key, meta, cost)
    for _, e in ipairs(entries) do
      if e.load then out.load[e.load] = e.f else out.row[e.row] = e.f end
    end
    out.headline[key or ""] = head
  end
  take(nil, self.meta, costs.own)
  for _, m in ipairs(self.machines) do take(m.key, m.meta, costs.machines[m.key]) end
  return out
end

-- The measured figures, in the plan's layout; with machines, each one's under benchmarks.machines.KEY.
-- Each load (and sweep point) carries its cost and efficiency figures; benchmarks.efficiency (and
-- each machine's) the headline's. `costs`: read_costs(self), read now when not given.
function M.benchmarks(self, costs)
  local eff = M.efficiency(self, costs)
  local b = layout(loads_of(self, nil), self.gpu)
  b.loads = {}
  for _, l in ipairs(self.loads) do
    b.loads[l.machine and (label_of(self, l.machine) .. " " .. l.name) or l.name] = copy(l.m, eff.load[l])
  end
  local function rows_of(s)
    local rows = {}
    for i, row in ipairs(s.rows) do rows[i] = copy(row, eff.row[row]) end
    return rows
  end
  for _, s in ipairs(self.sweeps) do
    if not s.machine and not b.sweep then b.sweep = rows_of(s) end
  end
  b.efficiency = eff.headline[""]
  if self.server_metrics then b.vllm_metrics = self.server_metrics.summary end
  if #self.machines > 0 then
    b.machines = {}
    for _, m in ipairs(self.machines) do
      local bm = layout(loads_of(self, m.key), m.gpu)
      for _, s in ipairs(self.sweeps) do
        if s.machine == m.key and not bm.sweep then bm.sweep = rows_of(s) end
      end
      bm.efficiency = eff.headline[m.key]
      if m.server_metrics then bm.vllm_metrics = m.server_metrics.summary end
      b.machines[m.key] = bm
    end
  end
  return b, eff
end

-- The reference, when it applies to this run: one machine, and the reference's own model and
-- quantization (a report whose metadata names another model gets no reference comparison).
function M.applicable_reference(self)
  local ref = self.reference
  if not ref or #self.machines > 0 then return nil end
  local model, q = self.meta.model, self.meta.quantization
  if ref.model and model ~= nil and tostring(model) ~= ref.model then return nil end
  if ref.quantization and q ~= nil and tostring(q):upper() ~= ref.quantization:upper() then return nil end
  return ref
end

-- results.json's `comparable_nvidia` (the plan's layout): the reference's figures beside this
-- run's, with where they come from and under which conditions. A published reference whose
-- conditions differ (reference_numbers.lua: another model, GPU count, engine) gets no ratio: a
-- ratio would read as like for like. VRAM is never compared (vLLM allocates a share of the GPU).
function M.comparison(self, b)
  local ref = self:applicable_reference()
  if not ref then return nil end
  local c32 = b.concurrent and b.concurrent["32_requests_tokens_per_second"]
  local out = { reference = ref.label, source = ref.source, conditions = ref.conditions, simulated = self.simulated,
                like_for_like = false, reference_figures = { ttft_ms = ref.ttft_ms, concurrent_32_tps = ref.concurrent_32_tps,
                  throughput_tps = ref.throughput_tps, ttft_note = ref.ttft_note, concurrent_32_note = ref.concurrent_32_note } }
  local said = {}
  local function beside(what, mine, theirs, unit, note)
    if not (finite(mine) and finite(theirs)) then return end
    said[#said + 1] = string.format("%s %s %s here, %s %s there (%s)", what, fixed("%.1f", mine), unit, fixed("%.1f", theirs), unit, note or "")
  end
  beside("time to first token", b.latency and b.latency.time_to_first_token_ms, ref.ttft_ms, "ms", ref.ttft_note)
  beside("throughput", c32, ref.concurrent_32_tps, "tok/s", ref.concurrent_32_note)
  if #said == 0 then return nil end
  out.notes = string.format("%sbeside %s: %s; conditions differ: %s; no ratio is given (reference: %s)",
                            self.simulated and "SIMULATED figures, " or "", ref.label, table.concat(said, "; "),
                            ref.conditions or "see the source", ref.source)
  return out
end

-- What the droplets billed to the report and to its machines cost so far (metadata.cost_usd).
function M.billed_cost(self)
  return M.read_costs(self).total
end

-- Each machine's metadata, cost and status (results.json's `machines`). `costs`: read_costs(self).
function M.machine_records(self, costs)
  costs = costs or M.read_costs(self)
  local out = {}
  for _, m in ipairs(self.machines) do
    local rec = { label = m.label, status = m.error and "failed" or "complete", error = m.error }
    for k, v in pairs(m.meta) do rec[k] = v end
    if rec.cost_usd == nil and costs.machines[m.key] then rec.cost_usd = costs.machines[m.key] end
    for k, v in pairs(m.extra) do if rec[k] == nil then rec[k] = v end end
    out[#out + 1] = rec
  end
  return out
end

return M
