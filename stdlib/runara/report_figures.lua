-- runara.report_figures: what a report measured, in the Runara plan's layout (results.json's
-- benchmarks), the reference comparison (comparable_nvidia) and what the machines cost. Each
-- function is a report's method (self: the report). See report.lua.
local M = {}

local report_format = require("runara.report_format")
local finite, num, fixed = report_format.finite, report_format.num, report_format.fixed

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
function M.benchmarks(self)
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
function M.applicable_reference(self)
  local ref = self.reference
  if not ref or #self.machines > 0 then return nil end
  local model, q = self.meta.model, self.meta.quantization
  if ref.model and model ~= nil and tostring(model) ~= ref.model then return nil end
  if ref.quantization and q ~= nil and tostring(q):upper() ~= ref.quantization:upper() then return nil end
  return ref
end

-- results.json's `comparable_nvidia` (the plan's layout): this run's figures as ratios of the
-- reference's, and a sentence saying what they mean and where the reference comes from.
function M.comparison(self, b)
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
    said[#said + 1] = fixed("%.2f", out.h100_equivalent_throughput_ratio) .. "x the single-stream throughput"
  end
  if out.concurrent_32_ratio then said[#said + 1] = fixed("%.2f", out.concurrent_32_ratio) .. "x the 32-concurrent throughput" end
  if out.ttft_ratio then said[#said + 1] = fixed("%.2f", out.ttft_ratio) .. "x the time to first token" end
  local vram = b.memory and b.memory.vram_peak_gb
  if vram and ref.vram_gb then
    said[#said + 1] = string.format("a VRAM peak of %s GB against its ~%.0f GB", fixed("%.0f", vram), ref.vram_gb)
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

-- What the droplets billed to the report and to its machines cost so far (metadata.cost_usd).
function M.billed_cost(self)
  local seen = {}
  local total = 0
  for _, m in ipairs(self.machines) do total = total + cost_of(m.billed, seen) end
  return total + cost_of(self.billed, seen)
end

-- Each machine's metadata, cost and status (results.json's `machines`).
function M.machine_records(self)
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

return M
