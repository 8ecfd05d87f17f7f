-- runara.report_metric_rows: the server metrics' table (vLLM's /metrics), the report's own and
-- each machine's: a row per metric, mean and max for gauges, the delta for counters.
local format = require("runara.report_format")

local fv, multi = format.fv, format.multi

-- Server metrics (vLLM's /metrics) by machine: { {label =, res = (sampler results or nil), summary =}, ... }.
local function metric_sets(v)
  local out = {}
  local own = multi(v) and "run" or nil
  if type(v.server_metrics) == "table" then out[#out + 1] = { label = own, res = v.server_metrics, summary = v.server_metrics.summary } end
  if type(v.vllm_summary) == "table" then out[#out + 1] = { label = own, summary = v.vllm_summary } end
  for _, m in ipairs(multi(v) and v.machines or {}) do
    if type(m.server_metrics) == "table" then out[#out + 1] = { label = m.label, res = m.server_metrics, summary = m.server_metrics.summary } end
  end
  return out
end

-- A row per metric of one set (at most 40, by name).
local METRIC_COLUMNS = { "metric", "mean", "max", "last", "counted (delta)" }
local function metric_rows(set)
  local rows, names = {}, {}
  local metrics = type(set.summary) == "table" and set.summary.metrics or {}
  if type(metrics) ~= "table" then return rows end
  for name in pairs(metrics) do names[#names + 1] = tostring(name) end
  table.sort(names)
  for i, name in ipairs(names) do
    if i > 40 then break end
    local x = metrics[name]
    if type(x) == "table" then
      local counter = name:match("_total$") ~= nil or name:match("_count$") ~= nil or name:match("_sum$") ~= nil
      local row = { name, counter and "—" or fv(x.mean, 2), counter and "—" or fv(x.max, 2), fv(x.last, 2), counter and fv(x.delta, 0) or "—" }
      if set.label then table.insert(row, 1, set.label) end
      rows[#rows + 1] = row
    end
  end
  return rows
end

return {
  metric_sets = metric_sets,
  METRIC_COLUMNS = METRIC_COLUMNS,
  metric_rows = metric_rows,
}
