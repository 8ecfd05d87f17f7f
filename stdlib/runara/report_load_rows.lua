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

-- One load's row, and whether a figure in it rests on too few samples.
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
  local e2el, fe = pct(m.median_e2el_ms, samples(m, "e2el"), need.median)
  flagged = flagged or fe
  return { name, f(c, 0), f(m.completed, 0) .. " / " .. f(m.failed, 0), f(m.output_throughput), ttft, tpot, itl, e2el, f(m.energy_j, 0) }, flagged
end

-- The loads' table: rows (with a machine column when there are several) and the sample-size note.
local function loads_table(v, list)
  local cols, rows, few = {}, {}, {}
  if multi(v) then cols[1] = "machine" end
  for _, c in ipairs(LOAD_COLUMNS) do cols[#cols + 1] = c end
  local labels, order = {}, {}
  for i, m in ipairs(v.machines or {}) do labels[m.key], order[m.key] = m.label, i end
  if multi(v) then  -- the machines' runs of one load next to each other, in the order the loads ran
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
  for _, l in ipairs(list) do
    local row, flagged = load_row(v, l.name, l.concurrency, l.m)
    if multi(v) then table.insert(row, 1, labels[l.machine] or "—") end
    rows[#rows + 1] = row
    if flagged then
      few[#few + 1] = string.format("%s%s %s", multi(v) and ((labels[l.machine] or "") .. " ") or "", l.name, f(samples(l.m, "ttft"), 0))
    end
  end
  return cols, rows, few
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
}
