-- runara.report_summary: a few lines for the terminal at the end of a run, the key figures (a
-- column per machine in a comparison) and where the reports are. rep:summary(paths).
local figures = require("runara.report_figures")
local compare = require("runara.report_machine_comparison")
local checks = require("runara.report_checks")
local text = require("runara.report_text")
local thresholds = require("runara.report_thresholds")

local M = {}

local report_format = require("runara.report_format")
local finite, fixed = report_format.finite, report_format.fixed

-- The report's method rep:summary (self: the report; paths: what write() returned, or nil).
function M.summary(self, paths)
  local bad = checks.summary(paths)
  if bad then error(bad, 2) end
  local b = self:benchmarks()
  local ref = self:applicable_reference() or {}
  local lines = { self.title .. (self.simulated and " (SIMULATED)" or "") .. (self:errors() and " (PARTIAL)" or "") }
  if #self.machines > 0 then
    local recs = figures.machine_records(self)
    local cmp = compare.machine_comparison(self, b, recs)
    local width = 44
    for _, r in ipairs(cmp and cmp.rows or {}) do width = math.max(width, #r.metric) end
    local head = string.format("  %-" .. width .. "s", "")
    for _, m in ipairs(self.machines) do head = head .. string.format(" %12s", m.label:sub(1, 12)) end
    lines[#lines + 1] = head
    for _, r in ipairs(cmp and cmp.rows or {}) do
      local line = string.format("  %-" .. width .. "s", r.metric)
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
    local width = math.max(22, #text.power_label(self), #text.vram_label(self))
    for _, h in ipairs(self.headlines) do width = math.max(width, #h.label) end
    local function add(label, v, unit, r, spec)
      if not finite(v) then return end
      lines[#lines + 1] = string.format("  %-" .. width .. "s %10s %-6s%s", label, fixed(spec or "%.1f", v), unit,
        r and string.format(" (%s: %s)", ref.label, fixed("%.1f", r)) or "")
    end
    -- The scenario's own headline first (rep:headline): its TFLOPS, tokens/s, MFU, validity.
    for _, h in ipairs(self.headlines) do
      local value, unit = text.headline_value(h)
      lines[#lines + 1] = string.format("  %-" .. width .. "s %10s %-6s%s", h.label, value, unit, h.note and (" (" .. h.note .. ")") or "")
    end
    add("single-stream output", b.throughput and b.throughput.tokens_per_second, "tok/s", ref.throughput_tps)
    add("time to first token", b.latency and b.latency.time_to_first_token_ms, "ms", ref.ttft_ms)
    add("32 concurrent output", b.concurrent and b.concurrent["32_requests_tokens_per_second"], "tok/s", ref.concurrent_32_tps)
    add(text.power_label(self), b.power and b.power.peak_w, "W")
    add(text.vram_label(self), b.memory and b.memory.vram_peak_gib, "GiB")
    local e = b.efficiency or {}
    add("USD/M output, steady", e.usd_per_million_output_tokens, "USD", nil, "%.2f")
    add("USD/M output, all-in", e.all_in and e.all_in.usd_per_million_output_tokens, "USD", nil, "%.2f")
    add("output tokens/J", e.output_tokens_per_joule, "tok/J", nil, "%.3f")
    if e.load and (finite(e.usd_per_million_output_tokens) or finite(e.output_tokens_per_joule)) then
      lines[#lines + 1] = "  (steady and tok/J at " .. e.load .. "; all-in: the machine's whole life so far over every load's tokens)"
    end
  end
  -- The gates the script set, and which were crossed (the run exits 4): said before the paths.
  local labels = {}
  for _, m in ipairs(self.machines) do labels[m.key] = m.label end
  local gates = thresholds.gates(self.loads, self.sweeps, function(key) return labels[key] or key end)
  for _, l in ipairs(thresholds.summary_lines(gates)) do lines[#lines + 1] = l end
  if paths then lines[#lines + 1] = "  report: " .. paths.html .. "  (also report.md, results.json)" end
  return table.concat(lines, "\n")
end

return M
