-- runara.report_chart_series: the series report.html's charts draw (report_svg.lua draws them):
-- figures against concurrency, the GPUs and the server over time; one series per machine, each
-- machine in its own colour.
local format = require("runara.report_format")
local load_rows = require("runara.report_load_rows")
local gpu_rows = require("runara.report_gpu_rows")
local metric_rows = require("runara.report_metric_rows")

local finite, multi = format.finite, format.multi
local samples, gpu_sets, metric_sets = load_rows.samples, gpu_rows.gpu_sets, metric_rows.metric_sets

-- The colour of machine i's series (the same in every chart).
local MACHINE_COLORS = { "#d62728", "#2ca02c", "#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf" }

-- The groups a chart splits its series by: one per machine, or one unnamed group.
local function groups(v)
  if not multi(v) then return { { key = nil, prefix = "" } } end
  local out = {}
  for i, m in ipairs(v.machines) do out[i] = { key = m.key, prefix = m.label .. " ", color = MACHINE_COLORS[(i - 1) % #MACHINE_COLORS + 1] } end
  return out
end

-- Points (concurrency, value) of one machine's (key; nil: the report's own) loads and sweeps, and
-- which of them rest on fewer samples than `need` (few[i] = samples).
local function by_concurrency(v, key, field, metric, need)
  local pts = {}
  local function add(c, m)
    if finite(c) and finite(m[field]) then
      local n = metric and samples(m, metric)
      pts[#pts + 1] = { c, m[field], few = (need and n and n < need) and n or nil }
    end
  end
  for _, l in ipairs(v.loads) do
    if l.machine == key and l.kind ~= "latency" then add(l.concurrency, l.m) end
  end
  for _, s in ipairs(v.sweeps) do
    if s.machine == key then for _, m in ipairs(s.rows) do add(m.max_concurrency, m) end end
  end
  table.sort(pts, function(a, b) return a[1] < b[1] end)
  local few, any = {}, false
  for i, p in ipairs(pts) do if p.few then few[i], any = p.few, true end end
  return pts, any and few or nil
end

-- A series per machine (group) and spec ({name, field, metric, need, dash}), and whether a point
-- of one rests on too few samples.
local function concurrency_series(v, specs)
  local series, any_few = {}, false
  for _, g in ipairs(groups(v)) do
    for i, s in ipairs(specs) do
      local pts, few = by_concurrency(v, g.key, s.field, s.metric, s.need)
      if #pts > 0 then
        series[#series + 1] = { name = g.prefix .. s.name, points = pts, few = few, dash = s.dash,
                                color = g.color or (s.color_index and MACHINE_COLORS[s.color_index]) }
        any_few = any_few or few ~= nil
      end
    end
  end
  return series, any_few
end

-- GPU series over time for `field` (scaled by k): per GPU (up to 4 per machine), or, for a
-- machine with more GPUs, their total (power) or largest (VRAM) per sample. A reading that is
-- NaN or infinite (a GPU tool's garbage) is passed on as it is (a total with one becomes NaN): the
-- chart leaves such points out and says how many.
local function over_time(v, field, k, name, combine)
  local series = {}
  local sets = gpu_sets(v)
  for si, set in ipairs(sets) do
    local g = set.gpu
    local prefix = set.label and (set.label .. " ") or ""
    local color = multi(v) and MACHINE_COLORS[(si - 1) % #MACHINE_COLORS + 1] or nil
    local count = 0
    for _, sample in ipairs(g.samples or {}) do count = math.max(count, #(sample.gpus or {})) end
    if count > 4 then
      local pts = {}
      for _, sample in ipairs(g.samples or {}) do
        local acc, bad
        for _, x in ipairs(sample.gpus or {}) do
          if finite(x[field]) then acc = combine == "sum" and (acc or 0) + x[field] or math.max(acc or -math.huge, x[field])
          elseif type(x[field]) == "number" then bad = true end
        end
        if bad and (combine == "sum" or not acc) then acc = 0 / 0 end
        if acc and type(sample.t_s) == "number" then pts[#pts + 1] = { sample.t_s, acc * k } end
      end
      if #pts > 0 then
        series[#series + 1] = { name = string.format("%s%s (%d GPUs, %s)", prefix, name, count, combine == "sum" and "total" or "largest"),
                                points = pts, dots = false, color = color }
      end
    else
      local per = {}
      for _, sample in ipairs(g.samples or {}) do
        for _, x in ipairs(sample.gpus or {}) do
          local i = (finite(x.index) and x.index or 0) + 1
          if i >= 1 and i <= 8 and type(x[field]) == "number" then
            per[i] = per[i] or { name = prefix .. name .. " GPU " .. (i - 1), points = {}, dots = false, color = color, dash = color and i > 1 }
            local p = per[i].points
            p[#p + 1] = { sample.t_s, x[field] * k }
          end
        end
      end
      for i = 1, 8 do if per[i] then series[#series + 1] = per[i] end end
    end
  end
  return series
end

-- The phase marks of the GPU charts.
local function gpu_marks(v)
  local sets = gpu_sets(v)
  if #sets ~= 1 then return nil end  -- machines' clocks differ: marks only where one machine is charted
  local marks = {}
  for _, m in ipairs(sets[1].gpu.marks or {}) do
    local label = tostring(m.label)
    if not label:match(" end$") then marks[#marks + 1] = { x = m.t_s, label = (label:gsub(" start$", "")) } end
  end
  return marks
end

-- A server metric's value in one sample (names with or without the "vllm:" prefix): the first
-- finite one, else one that is NaN or infinite (for the chart to count as left out), else nil.
local function metric_value(values, names)
  local bad
  for _, n in ipairs(names) do
    local x = values[n] or values["vllm:" .. n]
    if finite(x) then return x end
    if type(x) == "number" then bad = bad or x end
  end
  return bad
end

-- A series per machine of a server metric over time (scaled by k).
local function metric_series(v, names, label, k)
  local series = {}
  for si, set in ipairs(metric_sets(v)) do
    if set.res and type(set.res.samples) == "table" then
      local pts = {}
      for _, s in ipairs(set.res.samples) do
        local x = type(s.values) == "table" and metric_value(s.values, names)
        if x and type(s.t_s) == "number" then pts[#pts + 1] = { s.t_s, x * (k or 1) } end
      end
      if #pts > 0 then
        series[#series + 1] = { name = (set.label and (set.label .. " ") or "") .. label, points = pts, dots = false,
                                color = multi(v) and MACHINE_COLORS[(si - 1) % #MACHINE_COLORS + 1] or nil }
      end
    end
  end
  return series
end

return {
  concurrency_series = concurrency_series,
  over_time = over_time,
  gpu_marks = gpu_marks,
  metric_series = metric_series,
}
