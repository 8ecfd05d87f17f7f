-- runara.report_load_rows: the rows of the loads' and sweeps' tables, each percentile marked †
-- when it rests on fewer samples than it needs (the view's min_samples), and the note saying so.
local format = require("runara.report_format")

local finite, f, multi = format.finite, format.f, format.multi

-- Sample sizes: how many values a load's percentiles rest on.
local function samples(m, metric)
  local n = m["count_" .. metric]
  if finite(n) then return n end
  if metric ~= "itl" and finite(m.completed) then return m.completed end
  return nil
end

-- A percentile's text, with † when it rests on fewer samples than it needs (v.min_samples).
local function pct(value, n, need, digits)
  local text = f(value, digits)
  if finite(value) and n and n < need then return text .. "†", true end
  return text, false
end

local LOAD_COLUMNS = { "load", "concurrency", "ok / failed", "output tok/s", "TTFT p50 / p99 (ms)",
                       "TPOT p50 / p99 (ms)", "ITL p50 / p99 (ms)", "E2EL p50 (ms)", "energy (J)" }

-- Whether runara's from-schedule TTFT differs from vLLM's (from the send) by more than 5 % of
-- the mean: the requests waited before they went out (a slot under max_concurrency, a client
-- behind its schedule), and the row shows both, as the printed summary does.
local function schedule_differs(m)
  local sent, due = m.mean_ttft_ms, m.mean_ttft_from_schedule_ms
  return finite(sent) and finite(due) and due - sent > 0.05 * sent
end

-- One load's row, whether a figure in it rests on too few samples, and whether its TTFT cell
-- also shows the from-schedule figures.
local function load_row(v, name, c, m)
  local need = v.min_samples or { p99 = 100, median = 10 }
  local flagged = false
  local function pair(metric, digits)
    local n = samples(m, metric)
    local a, fa = pct(m["median_" .. metric .. "_ms"], n, need.median, digits)
    local b, fb = pct(m["p99_" .. metric .. "_ms"], n, need.p99, digits)
    flagged = flagged or fa or fb
    return a .. " / " .. b
  end
  local ttft, tpot, itl = pair("ttft"), pair("tpot", 2), pair("itl", 2)
  local waited = schedule_differs(m)
  if waited then
    ttft = ttft .. " (from schedule " .. pair("ttft_from_schedule") .. "; mean queue " .. f(m.mean_queue_ms) .. ")"
  end
  local e2el, fe = pct(m.median_e2el_ms, samples(m, "e2el"), need.median)
  flagged = flagged or fe
  -- A repeated load (runara.repeats): its figures are medians; output tok/s shows the 95 % interval's half-width.
  local tok = f(m.output_throughput)
  local ci = type(m.intervals) == "table" and m.intervals.output_throughput
  if type(m.repeats) == "table" and finite(m.repeats.count) then
    if type(ci) == "table" and finite(ci.low) and finite(ci.high) then tok = tok .. " ± " .. f((ci.high - ci.low) / 2) end
    tok = tok .. " (median of " .. f(m.repeats.count, 0) .. ")"
  end
  return { name, f(c, 0), f(m.completed, 0) .. " / " .. f(m.failed, 0), tok, ttft, tpot, itl, e2el, f(m.energy_j, 0) }, flagged, waited
end

-- The loads in the order the tables show them: with several machines, the machines' runs of
-- one load next to each other, in the order the loads ran.
local function ordered(v, list)
  local order = {}
  for i, m in ipairs(v.machines or {}) do order[m.key] = i end
  if multi(v) then
    local first, sorted = {}, {}
    for i, l in ipairs(list) do
      first[l.name] = first[l.name] or i
      sorted[i] = { l = l, i = i }
    end
    table.sort(sorted, function(a, b)
      local fa, fb = first[a.l.name], first[b.l.name]
      if fa ~= fb then return fa < fb end
      local ma, mb = order[a.l.machine] or 0, order[b.l.machine] or 0
      if ma ~= mb then return ma < mb end
      return a.i < b.i
    end)
    list = {}
    for i, x in ipairs(sorted) do list[i] = x.l end
  end
  return list
end

-- The loads' table: rows (with a machine column when there are several), the loads whose
-- figures rest on few samples, and those whose requests waited before the send.
local function loads_table(v, list)
  local cols, rows, few, waited = {}, {}, {}, {}
  if multi(v) then cols[1] = "machine" end
  for _, c in ipairs(LOAD_COLUMNS) do cols[#cols + 1] = c end
  local labels = {}
  for _, m in ipairs(v.machines or {}) do labels[m.key] = m.label end
  for _, l in ipairs(ordered(v, list)) do
    local row, flagged, late = load_row(v, l.name, l.concurrency, l.m)
    if multi(v) then table.insert(row, 1, labels[l.machine] or "—") end
    rows[#rows + 1] = row
    if late then waited[#waited + 1] = l.name end
    if flagged then
      few[#few + 1] = string.format("%s%s %s", multi(v) and ((labels[l.machine] or "") .. " ") or "", l.name, f(samples(l.m, "ttft"), 0))
    end
  end
  return cols, rows, few, waited
end

-- What "(from schedule …)" in the TTFT column means, when a load shows it.
local function schedule_note(waited)
  if #waited == 0 then return nil end
  return "TTFT is vLLM's, from each request's send. Where requests waited before they were sent (" ..
    table.concat(waited, ", ") .. "), the cell also gives the TTFT from when each was due, the wait included " ..
    "(coordinated-omission-correct), and the mean wait: their means differ by more than 5 %."
end

-- The cost and efficiency table (docs/report.md#cost-and-efficiency): a row per load and sweep
-- point (a machine column when there are several), from the view's efficiency figures. Returns
-- the columns, the rows (none when no load has a figure) and the note saying what the columns mean.
local EFFICIENCY_COLUMNS = { "load", "USD / M output tok, steady", "USD / M total tok, steady", "USD / M output tok, all-in",
  "USD / M total tok, all-in", "output tok/s per GPU", "interactivity (tok/s per user)", "output tok/J", "energy from" }
local ENERGY_FROM = { counter = "counter", trapezoid = "integrated power", mixed = "counter and integrated power" }
local function usd(x) return finite(x) and ("$" .. f(x, 2)) or "—" end
local function efficiency_table(v)
  local eff = v.efficiency
  local cols, rows = {}, {}
  if type(eff) ~= "table" then return cols, rows end
  if multi(v) then cols[1] = "machine" end
  for _, c in ipairs(EFFICIENCY_COLUMNS) do cols[#cols + 1] = c end
  local labels = {}
  for _, m in ipairs(v.machines or {}) do labels[m.key] = m.label end
  local any = false
  -- The cost at a goodput SLO, as a last column only where a load had an SLO.
  local slo = false
  for _, l in ipairs(v.loads or {}) do
    local x = eff.load[l]
    slo = slo or (type(x) == "table" and finite(x.usd_per_million_good_output_tokens))
  end
  if slo then cols[#cols + 1] = "USD / M output tok at the SLO" end
  local function add(key, name, m, x)
    if type(x) ~= "table" or next(x) == nil then return end
    any = true
    local src = finite(m.energy_j) and (ENERGY_FROM[m.energy_source] or m.energy_source or "—") or "—"
    local row = { name, usd(x.usd_per_million_output_tokens), usd(x.usd_per_million_total_tokens),
      usd(x.usd_per_million_output_tokens_all_in), usd(x.usd_per_million_total_tokens_all_in),
      finite(x.output_tokens_per_s_per_gpu) and f(x.output_tokens_per_s_per_gpu) or "—",
      finite(x.interactivity_tokens_per_s_per_user) and f(x.interactivity_tokens_per_s_per_user) or "—",
      finite(x.output_tokens_per_joule) and f(x.output_tokens_per_joule, 3) or "—", src }
    if slo then row[#row + 1] = usd(x.usd_per_million_good_output_tokens) end
    if multi(v) then table.insert(row, 1, labels[key] or "—") end
    rows[#rows + 1] = row
  end
  for _, l in ipairs(ordered(v, v.loads)) do add(l.machine, l.name, l.m, eff.load[l]) end
  for _, s in ipairs(v.sweeps) do
    for i, m in ipairs(s.rows) do add(s.machine, tostring(m.label or (s.name .. " " .. i)), m, eff.row[m]) end
  end
  if not any then return cols, {} end
  return cols, rows
end

-- What the cost and efficiency table's columns are, in one paragraph (the formulas are in docs/report.md).
local EFFICIENCY_NOTE = "At the machine's billed hourly price. Steady: the load's own duration × the price, over the tokens it produced. " ..
  "All-in: the machine's whole life until this report (boot, model load, every load and the gaps between them), shared among the loads " ..
  "in proportion to their durations, over each load's tokens. Total tokens are input + output. Interactivity: 1000 / median TPOT (ms). " ..
  "Output tok/J: output tokens over the GPUs' energy in the load's own window."

-- Why each energy figure used its source (the GPU tool's counter, or the power samples
-- integrated), one sentence per load whose figure did not simply come from a counter that agrees.
local function energy_load_notes(v)
  local out, labels = {}, {}
  for _, m in ipairs(v.machines or {}) do labels[m.key] = m.label end
  local function add(key, name, m)
    if finite(m.energy_j) and type(m.energy_note) == "string" and m.energy_source ~= "counter" then
      out[#out + 1] = (key and ((labels[key] or key) .. " ") or "") .. name .. ": " .. m.energy_note
    end
  end
  for _, l in ipairs(v.loads) do add(l.machine, l.name, l.m) end
  for _, s in ipairs(v.sweeps) do for i, m in ipairs(s.rows) do add(s.machine, tostring(m.label or (s.name .. " " .. i)), m) end end
  return out
end

-- The note under a table with † figures: the rule, and how many requests each load measured.
local function few_note(v, few)
  if #few == 0 then return nil end
  local need = v.min_samples or { p99 = 100, median = 10 }
  return string.format("† rests on too few samples to mean much: a p99 needs at least %d (fewer leave less than one sample above it), " ..
    "a median at least %d. Requests measured: %s.", need.p99, need.median, table.concat(few, ", "))
end

return {
  samples = samples,
  LOAD_COLUMNS = LOAD_COLUMNS,
  load_row = load_row,
  loads_table = loads_table,
  few_note = few_note,
  schedule_note = schedule_note,
  efficiency_table = efficiency_table,
  EFFICIENCY_NOTE = EFFICIENCY_NOTE,
  energy_load_notes = energy_load_notes,
}
