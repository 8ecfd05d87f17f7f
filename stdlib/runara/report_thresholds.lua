-- runara.report_thresholds: the pass/fail gates a script set on its loads (http_load's
-- `thresholds = { ttft_p99_ms = 500 }`, docs/http_load.md#thresholds) as the reports show them: each
-- load's gates with their limit, the value measured and the verdict. A crossed gate ends the run
-- with exit status 4; the report says so in its banner, a Thresholds section, the printed summary,
-- and results.json's report.status "thresholds". Pure: tables in, tables and text out.
local format = require("runara.report_format")

local M = {}

local finite = format.finite

-- What a report keeps of an http_load result's gates: { thresholds = { name = {limit, value, ok} },
-- crossed = { "ttft_p99_ms: 612.30 > 500", ... } }, or nil when the load set none.
function M.keep(res)
  if type(res.thresholds) ~= "table" then return nil end
  local kept = {}
  for name, t in pairs(res.thresholds) do
    if type(name) == "string" and type(t) == "table" and finite(t.limit) then
      kept[name] = { limit = t.limit, value = finite(t.value) and t.value or nil, ok = t.ok == true }
    end
  end
  if next(kept) == nil then return nil end
  local crossed = {}
  for _, c in ipairs(type(res.thresholds_crossed) == "table" and res.thresholds_crossed or {}) do
    if type(c) == "string" then crossed[#crossed + 1] = c end
  end
  return { thresholds = kept, crossed = crossed }
end

-- Every gate of the report (what M.keep kept in each load's figures and sweep row, as
-- `thresholds`), loads first then sweep points, each load's gates by name:
-- { { load =, threshold =, limit =, value =, ok = }, ... }. `label(key)`: a machine's label.
function M.gates(loads, sweeps, label)
  local out = {}
  local function add(name, machine, g)
    if type(g.thresholds) ~= "table" then return end
    local names = {}
    for n in pairs(g.thresholds) do names[#names + 1] = n end
    table.sort(names)
    local load = (machine and (label(machine) .. " ") or "") .. name
    for _, n in ipairs(names) do
      local t = g.thresholds[n]
      out[#out + 1] = { load = load, threshold = n, limit = t.limit, value = t.value, ok = t.ok }
    end
  end
  for _, l in ipairs(loads) do add(l.name, l.machine, l.m) end
  for _, s in ipairs(sweeps) do
    for i, row in ipairs(s.rows) do add(tostring(row.label or (s.name .. " " .. i)), s.machine, row) end
  end
  return out
end

local function crossed_of(gates)
  local n = 0
  for _, g in ipairs(gates) do if not g.ok then n = n + 1 end end
  return n
end
M.crossed = crossed_of

-- Lower bounds (min_output_throughput) pass at or above their limit; the rest at or below. Said
-- in words: "<" and ">" are entities in report.md's escaped cells.
local function lower_bound(g) return g.threshold:match("^min_") ~= nil end
local function limit_text(g) return (lower_bound(g) and "at least " or "at most ") .. format.fixed("%.6g", g.limit) end

-- One gate as a sentence: "ttft_p99_ms at concurrent_32: 27.50, above its limit of 5".
function M.describe(g)
  local head = string.format("%s at %s: ", g.threshold, g.load)
  if not finite(g.value) then return head .. "not measured (limit " .. limit_text(g) .. ")" end
  local value = format.fixed("%.2f", g.value)
  if g.ok then return head .. value .. ", within its limit (" .. limit_text(g) .. ")" end
  return head .. value .. (lower_bound(g) and ", below" or ", above") .. " its limit of " .. format.fixed("%.6g", g.limit)
end

-- The banner's line when a gate was crossed (nil otherwise).
function M.banner(gates)
  local n = crossed_of(gates)
  if n == 0 then return nil end
  local first
  for _, g in ipairs(gates) do if not g.ok then first = g break end end
  return string.format("THRESHOLDS CROSSED — %d of %d gates: %s%s; the run exits with status 4.", n, #gates, M.describe(first),
    n > 1 and string.format(" (and %d more below)", n - 1) or "")
end

M.COLUMNS = { "load", "threshold", "limit", "measured", "verdict" }

-- The Thresholds table's rows.
function M.rows(gates)
  local rows = {}
  for _, g in ipairs(gates) do
    rows[#rows + 1] = { g.load, g.threshold, limit_text(g),
                        finite(g.value) and format.fixed("%.2f", g.value) or "not measured", g.ok and "passed" or "CROSSED" }
  end
  return rows
end

-- The printed summary's lines: every crossed gate, or one line saying all passed.
function M.summary_lines(gates)
  if #gates == 0 then return {} end
  local n, out = crossed_of(gates), {}
  if n == 0 then
    out[1] = string.format("  thresholds: all %d passed", #gates)
    return out
  end
  out[1] = string.format("  THRESHOLDS CROSSED: %d of %d (exit status 4)", n, #gates)
  for _, g in ipairs(gates) do
    if not g.ok and #out <= 8 then out[#out + 1] = "    " .. M.describe(g) end
  end
  if n > 8 then out[#out + 1] = string.format("    (and %d more in report.md)", n - 8) end
  return out
end

return M
