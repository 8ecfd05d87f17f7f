-- runara.report_document: what a report's write() writes, as data: results.json's sections (the
-- plan's, the report's status, and what rep:set added) and the renderers' view of the report.
-- Pure: nothing is written (tests render the view themselves). See report.lua.
local figures = require("runara.report_figures")
local compare = require("runara.report_machine_comparison")
local manifest = require("runara.manifest")
local thresholds = require("runara.report_thresholds")

local M = {}

local function merge(into, from)
  for k, v in pairs(from) do
    if type(v) == "table" and type(into[k]) == "table" then merge(into[k], v) else into[k] = v end
  end
end

-- results.json's own sections (the plan's and the report's status), in the order written;
-- rep:set adds sections of its own beside them.
M.SECTIONS = { "metadata", "headline", "manifest", "machines", "benchmarks", "comparison", "comparable_nvidia", "report" }

-- The units every figure is in (results.json's report.units; the reports label each figure so).
M.UNITS = {
  memory = "GiB (2^30 bytes) in report.md, report.html and the summary; in results.json a key ending _gib is in 2^30 bytes, " ..
           "_gb in 10^9 bytes (the plan's layout), _bytes in bytes",
  energy = "J", power = "W", time = "ms for latencies, s for durations", throughput = "tokens/s",
  cost = "USD; per million tokens: USD per 10^6 tokens at the machine's billed hourly price",
  efficiency = "output tokens per joule of GPU energy over the load's own window",
}

-- What the manifest says each load ran with: { {name =, inputs =}, ... }, loads then sweep points.
local function manifest_entries(self)
  local labels = {}
  for _, m in ipairs(self.machines) do labels[m.key] = m.label end
  local function prefix(key) return key and ((labels[key] or key) .. " ") or "" end
  local out = {}
  for _, l in ipairs(self.loads) do out[#out + 1] = { name = prefix(l.machine) .. l.name, inputs = l.inputs } end
  for _, s in ipairs(self.sweeps) do
    for i, row in ipairs(s.rows) do
      local inputs = s.inputs and s.inputs[i]
      if inputs then out[#out + 1] = { name = prefix(s.machine) .. tostring(row.label or (s.name .. " " .. i)), inputs = inputs } end
    end
  end
  return out
end
M.IS_SECTION = {}
for _, key in ipairs(M.SECTIONS) do M.IS_SECTION[key] = true end

-- results.json's sections (doc) and the renderers' view of the report `self`; `min_samples`:
-- report.MIN_SAMPLES.
function M.build(self, min_samples)
  local costs = figures.read_costs(self)  -- once: every cost figure of the report from one reading
  local b, eff = self:benchmarks(costs)
  local meta = { timestamp = os.date("!%Y-%m-%dT%H:%M:%SZ", self.started_unix), simulated = self.simulated }
  merge(meta, self.meta)
  local billed_any = #self.billed > 0
  for _, m in ipairs(self.machines) do billed_any = billed_any or #m.billed > 0 end
  if meta.cost_usd == nil and billed_any then
    meta.cost_usd = costs.total
    -- Read as the report is written, before teardown: the final bill (after the machines are
    -- destroyed) is run.total_cost_usd and run.log's last cost line, a few seconds' more.
    meta.cost_read_at_s = math.floor(costs.read_at_s * 10 + 0.5) / 10
    meta.cost_note = "billed so far, read when this report was written, before teardown; the final bill, after the machines " ..
                     "were destroyed, is results.json's run.total_cost_usd and run.log's last cost line"
  end
  local recs = figures.machine_records(self, costs)
  local cmp = #self.machines > 0 and compare.machine_comparison(self, b, recs) or nil
  local errors = self:errors()
  local machines_json
  if #recs > 0 then
    machines_json = {}
    for i, m in ipairs(self.machines) do machines_json[m.key] = recs[i] end
  end
  local man = manifest.build(self.manifest_fields, manifest_entries(self))
  local labels = {}
  for _, m in ipairs(self.machines) do labels[m.key] = m.label end
  local gates = thresholds.gates(self.loads, self.sweeps, function(key) return labels[key] or key end)
  local crossed = thresholds.crossed(gates)
  -- A failed run is PARTIAL whatever its gates said; a finished one that crossed a gate says so.
  local status = errors and "partial" or (crossed > 0 and "thresholds") or "complete"
  local headline = #self.headlines > 0 and {} or nil
  for i, h in ipairs(self.headlines) do headline[i] = { label = h.label, value = h.value, unit = h.unit, note = h.note } end
  local doc = { metadata = meta, manifest = man, machines = machines_json, benchmarks = b, headline = headline, comparison = compare.comparison_json(cmp),
                comparable_nvidia = self:comparison(b) or compare.measured_nvidia(self, cmp),
                report = { status = status, error = errors, units = M.UNITS,
                           thresholds = #gates > 0 and gates or nil, thresholds_crossed = #gates > 0 and crossed or nil,
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
                 tables = self.tables, charts = self.charts, headlines = self.headlines, phases = self.phases, machines = machines, compare = cmp, files = self.files,
                 min_samples = min_samples, efficiency = eff, manifest = man, gates = gates }
  return doc, view
end

return M
