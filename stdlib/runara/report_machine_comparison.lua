-- runara.report_machine_comparison: several machines side by side, one row per figure any of
-- them measured (the reports' Comparison table), as results.json's `comparison`, and with an
-- NVIDIA machine beside another one, results.json's `comparable_nvidia`. See report.lua.
local M = {}

local report_format = require("runara.report_format")
local comparison = require("runara.comparison")
local finite, fixed = report_format.finite, report_format.fixed

-- The comparison of several machines: one row per figure any of them measured.
function M.machine_comparison(self, b, recs)
  local keys, labels = {}, {}
  for i, m in ipairs(self.machines) do keys[i], labels[i] = m.key, m.label end
  local rows = {}
  local function add(metric, id, get, better, digits)
    local values, samples, any = {}, {}, false
    for i, m in ipairs(self.machines) do
      local v, n = get(m, b.machines[m.key] or {}, recs[i])
      if finite(v) then values[m.key], samples[m.key], any = v, n, true end
    end
    if not any then return end
    local r = { metric = metric, id = id, values = values, samples = samples, better = better, digits = digits }
    if #keys == 2 then
      local x, y = values[keys[1]], values[keys[2]]
      if x and y and y ~= 0 and finite(x / y * 1000) then r.ratio = math.floor(x / y * 1000 + 0.5) / 1000 end
      -- The first machine judged against the second, by the rule `runara compare` judges runs by.
      local verdict, pct, basis = comparison.verdict(y, x, better)
      if pct then r.verdicts = { [keys[1]] = { verdict = verdict, difference_pct = pct, basis = basis } } end
    end
    rows[#rows + 1] = r
  end
  local function load_where(m, pred)
    for _, l in ipairs(self.loads) do if l.machine == m.key and pred(l) then return l end end
  end
  local function kind(k) return function(l) return l.kind == k end end
  add("single-stream throughput (tok/s)", "single_stream_tps", function(m, bm) return bm.throughput and bm.throughput.tokens_per_second end, "higher")
  add("ITL median, single stream (ms)", "single_stream_itl_ms", function(m, bm) return bm.throughput and bm.throughput.inter_token_latency_ms end, "lower")
  add("TTFT median (ms)", "ttft_median_ms", function(m)
    local l = load_where(m, kind("latency"))
    return l and l.m.median_ttft_ms, l and (l.m.count_ttft or l.m.completed)
  end, "lower")
  add("TTFT p99 (ms)", "ttft_p99_ms", function(m)
    local l = load_where(m, kind("latency"))
    return l and l.m.p99_ttft_ms, l and (l.m.count_ttft or l.m.completed)
  end, "lower")
  local levels, seen = {}, {}
  for _, l in ipairs(self.loads) do
    if l.machine and l.kind == "concurrent" and finite(l.concurrency) and not seen[l.concurrency] then
      seen[l.concurrency] = true
      levels[#levels + 1] = l.concurrency
    end
  end
  table.sort(levels)
  for _, c in ipairs(levels) do
    local function at(m) return load_where(m, function(l) return l.kind == "concurrent" and l.concurrency == c end) end
    add(string.format("throughput at %s concurrent (tok/s)", fixed("%d", c)), "concurrent_" .. c .. "_tps", function(m)
      local l = at(m) return l and l.m.output_throughput end, "higher")
  end
  local top = levels[#levels]
  if top then
    local function at(m) return load_where(m, function(l) return l.kind == "concurrent" and l.concurrency == top end) end
    add(string.format("ITL median at %s concurrent (ms)", fixed("%d", top)), "concurrent_" .. top .. "_itl_ms", function(m)
      local l = at(m) return l and l.m.median_itl_ms end, "lower")
    add(string.format("TTFT p99 at %s concurrent (ms)", fixed("%d", top)), "concurrent_" .. top .. "_ttft_p99_ms", function(m)
      local l = at(m) return l and l.m.p99_ttft_ms, l and (l.m.count_ttft or l.m.completed) end, "lower")
    add(string.format("output tokens per joule at %s concurrent", fixed("%d", top)), "concurrent_" .. top .. "_tokens_per_joule", function(m)
      local l = at(m) return l and l.m.output_tokens_per_joule end, "higher")
    -- The load's cost and efficiency figures (report_efficiency.lua), as benchmarks.loads has them.
    local function eff(m, field)
      local l = at(m)
      local x = l and b.loads and b.loads[m.label .. " " .. l.name]
      return x and x[field]
    end
    add(string.format("output tok/s per GPU at %s concurrent", fixed("%d", top)), "concurrent_" .. top .. "_tps_per_gpu", function(m)
      return eff(m, "output_tokens_per_s_per_gpu") end, "higher")
    add(string.format("interactivity at %s concurrent (tok/s per user)", fixed("%d", top)), "concurrent_" .. top .. "_interactivity", function(m)
      return eff(m, "interactivity_tokens_per_s_per_user") end, "higher")
    add(string.format("USD per million output tokens at %s concurrent, steady-state", fixed("%d", top)), "concurrent_" .. top .. "_usd_per_mtok", function(m)
      return eff(m, "usd_per_million_output_tokens") end, "lower", 2)
  end
  add("highest sweep throughput (tok/s)", "sweep_peak_tps", function(m, bm)
    local best
    for _, row in ipairs(bm.sweep or {}) do
      if finite(row.output_throughput) then best = math.max(best or 0, row.output_throughput) end
    end
    return best
  end, "higher")
  add("USD per million output tokens, all-in (whole run)", "all_in_usd_per_mtok", function(m, bm)
    return bm.efficiency and bm.efficiency.all_in and bm.efficiency.all_in.usd_per_million_output_tokens
  end, "lower", 2)
  add("peak VRAM (GiB)", "vram_peak_gib", function(m, bm) return bm.memory and bm.memory.vram_peak_gib end, nil)
  add("peak power (W)", "power_peak_w", function(m, bm) return bm.power and bm.power.peak_w end, nil)
  add("GPU energy, whole sampling (J)", "gpu_energy_j", function(m, bm) return bm.power and bm.power.energy_j end, nil)
  add("price (USD/h)", "hourly_usd", function(m) return m.meta.hourly_usd end, "lower", 2)
  add("machine cost (USD)", "cost_usd", function(m, bm, rec) return rec and rec.cost_usd end, nil, 4)
  if #rows == 0 then return nil end
  return { machines = keys, labels = labels, rows = rows,
           ratio = #keys == 2 and (labels[1] .. " / " .. labels[2]) or nil, baseline = #keys == 2 and keys[2] or nil }
end

-- results.json's `comparison` (machine figures side by side) from the renderers' rows.
function M.comparison_json(cmp)
  if not cmp then return nil end
  local out = { machines = cmp.machines, ratio_of = cmp.ratio, metrics = {}, baseline = cmp.baseline,
                verdict_rule = cmp.baseline and (cmp.labels[1] .. " against " .. cmp.labels[2] .. ": better or worse beyond ±" ..
                  comparison.NOISE_PCT .. " %, within noise otherwise (runara.comparison)") or nil }
  for _, r in ipairs(cmp.rows) do
    local vd = r.verdicts and r.verdicts[cmp.machines[1]]
    out.metrics[r.id] = { metric = r.metric, values = r.values, ratio = r.ratio, better = r.better,
                          difference_pct = vd and vd.difference_pct, verdict = vd and vd.verdict }
  end
  return out
end

-- With an NVIDIA machine measured beside another one, results.json's comparable_nvidia holds the
-- other's figures as ratios of the measured NVIDIA machine's (not of an estimate).
function M.measured_nvidia(self, cmp)
  if not cmp or #self.machines ~= 2 then return nil end
  local a, n = self.machines[1], self.machines[2]
  local function nvidia(m) return tostring(m.meta.gpu or ""):match("NVIDIA") or tostring(m.meta.gpu_backend or ""):match("nvidia") end
  if not nvidia(n) or nvidia(a) then return nil end
  local by = {}
  for _, r in ipairs(cmp.rows) do by[r.id] = r.ratio end
  local out = { reference = n.label .. " measured in this run", source = "this run (" .. a.label .. " and " .. n.label .. " at the same time, same suite)",
                h100_equivalent_throughput_ratio = by.single_stream_tps, ttft_ratio = by.ttft_median_ms,
                concurrent_32_ratio = by.concurrent_32_tps, simulated = self.simulated }
  local said = {}
  if out.h100_equivalent_throughput_ratio then said[#said + 1] = fixed("%.2f", out.h100_equivalent_throughput_ratio) .. "x the single-stream throughput" end
  if out.concurrent_32_ratio then said[#said + 1] = fixed("%.2f", out.concurrent_32_ratio) .. "x the 32-concurrent throughput" end
  if out.ttft_ratio then said[#said + 1] = fixed("%.2f", out.ttft_ratio) .. "x the time to first token" end
  if #said == 0 then return nil end
  out.notes = string.format("%s%s against %s: %s", self.simulated and "SIMULATED figures, " or "", a.label, out.reference, table.concat(said, ", "))
  return out
end

return M
