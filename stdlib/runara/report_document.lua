-- runara.report_document: what a report's write() writes, as data: results.json's sections (the
-- plan's, the report's status, and what rep:set added) and the renderers' view of the report.
-- Pure: nothing is written (tests render the view themselves). See report.lua.
local figures = require("runara.report_figures")
local compare = require("runara.report_machine_comparison")

local M = {}

local function merge(into, from)
  for k, v in pairs(from) do
    if type(v) == "table" and type(into[k]) == "table" then merge(into[k], v) else into[k] = v end
  end
end

-- results.json's own sections (the plan's and the report's status), in the order written;
-- rep:set adds sections of its own beside them.
M.SECTIONS = { "metadata", "machines", "benchmarks", "comparison", "comparable_nvidia", "report" }
M.IS_SECTION = {}
for _, key in ipairs(M.SECTIONS) do M.IS_SECTION[key] = true end

-- results.json's sections (doc) and the renderers' view of the report `self`; `min_samples`:
-- report.MIN_SAMPLES.
function M.build(self, min_samples)
  local b = self:benchmarks()
  local meta = { timestamp = os.date("!%Y-%m-%dT%H:%M:%SZ", self.started_unix), simulated = self.simulated }
  merge(meta, self.meta)
  local billed_any = #self.billed > 0
  for _, m in ipairs(self.machines) do billed_any = billed_any or #m.billed > 0 end
  if meta.cost_usd == nil and billed_any then meta.cost_usd = self:billed_cost() end
  local recs = figures.machine_records(self)
  local cmp = #self.machines > 0 and compare.machine_comparison(self, b, recs) or nil
  local errors = self:errors()
  local machines_json
  if #recs > 0 then
    machines_json = {}
    for i, m in ipairs(self.machines) do machines_json[m.key] = recs[i] end
  end
  local doc = { metadata = meta, machines = machines_json, benchmarks = b, comparison = compare.comparison_json(cmp),
                comparable_nvidia = self:comparison(b) or compare.measured_nvidia(self, cmp),
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
                 min_samples = min_samples }
  return doc, view
end

return M
