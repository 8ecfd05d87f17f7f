-- runara.run_comparison: two or more runs' results.json side by side, what `runara compare`
-- writes as compare.json and renders as compare.md and compare.html (run_comparison_render.lua).
-- Pure: results.json documents in (already parsed), a table out; nothing is read or written here.
--
--   local cmp = run_comparison.build({ { label = "455f4494", dir = "/…/a", doc = {…} }, { label = …, doc = … } },
--                                    { baseline = 1, noise_pct = 2, thresholds = { "output_tokens_per_second=-5" } })
--
-- Each run is compared with the baseline (the first, or opts.baseline) on the loads both measured
-- (by name: the same script, or scripts sharing a suite), and on the run's headline figures; each
-- figure gets the difference in % and a verdict (runara.comparison: better, worse, within noise).
-- A report of several machines (scripts/compare_mi300x_h100.lua) is one run per machine
-- ("<run> MI300X"), so one machine of it compares with a run of that machine alone. A run that
-- cannot be compared (no results.json, a damaged one, no figures this knows) is listed with why;
-- when fewer than two remain, `error` says so and there are no rows.
local comparison = require("runara.comparison")
local errors = require("runara.errors")
local manifest = require("runara.run_comparison_manifest")
local workload = require("runara.run_comparison_workload")

local M = {}

M.FORMAT = "runara-compare/1"

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

-- A load's figures (benchmarks.loads.NAME, http_load's field names), by the names --threshold takes.
M.LOAD_METRICS = {
  { id = "output_tokens_per_second", field = "output_throughput", label = "output tok/s", better = "higher" },
  { id = "total_tokens_per_second", field = "total_token_throughput", label = "total tok/s", better = "higher" },
  { id = "requests_per_second", field = "request_throughput", label = "requests/s", better = "higher", digits = 2 },
  { id = "ttft_p50_ms", field = "median_ttft_ms", label = "TTFT p50 (ms)", better = "lower", digits = 2 },
  { id = "ttft_p99_ms", field = "p99_ttft_ms", label = "TTFT p99 (ms)", better = "lower", digits = 2 },
  -- runara's TTFT from when each request was due (queue included): vLLM's TTFT starts at the send.
  { id = "ttft_from_schedule_p99_ms", field = "p99_ttft_from_schedule_ms", label = "TTFT from schedule p99 (ms)", better = "lower", digits = 2 },
  { id = "tpot_p50_ms", field = "median_tpot_ms", label = "TPOT p50 (ms)", better = "lower", digits = 2 },
  { id = "tpot_p99_ms", field = "p99_tpot_ms", label = "TPOT p99 (ms)", better = "lower", digits = 2 },
  { id = "itl_p50_ms", field = "median_itl_ms", label = "ITL p50 (ms)", better = "lower", digits = 2 },
  { id = "itl_p99_ms", field = "p99_itl_ms", label = "ITL p99 (ms)", better = "lower", digits = 2 },
  { id = "e2el_p50_ms", field = "median_e2el_ms", label = "E2E latency p50 (ms)", better = "lower" },
  { id = "e2el_p99_ms", field = "p99_e2el_ms", label = "E2E latency p99 (ms)", better = "lower" },
  { id = "output_tokens_per_second_per_gpu", field = "output_tokens_per_s_per_gpu", label = "output tok/s per GPU", better = "higher" },
  { id = "interactivity", field = "interactivity_tokens_per_s_per_user", label = "interactivity (tok/s per user)", better = "higher" },
  { id = "usd_per_million_output_tokens", field = "usd_per_million_output_tokens", label = "USD per million output tokens, steady-state", better = "lower", digits = 4 },
  { id = "usd_per_million_output_tokens_all_in", field = "usd_per_million_output_tokens_all_in", label = "USD per million output tokens, all-in", better = "lower", digits = 4 },
  { id = "output_tokens_per_joule", field = "output_tokens_per_joule", label = "output tokens per joule", better = "higher", digits = 3 },
  -- Goodput: requests/s that met the load's SLOs (http_load's goodput option, vLLM's --goodput).
  { id = "goodput", field = "request_goodput", label = "goodput (requests/s within SLOs)", better = "higher", digits = 2 },
  { id = "failed_requests", field = "failed", label = "requests failed", better = "lower", digits = 0 },
  -- Failed over sent; compared in percentage points (a rate from 0 has no relative change).
  { id = "failure_rate", field = "failure_rate", label = "failure rate", better = "lower", digits = 4, points = 0.1,
    compute = function(l)
      local ok, failed = l.completed, l.failed
      if finite(ok) and finite(failed) and ok + failed > 0 then return failed / (ok + failed) end
    end },
  { id = "mean_power_w", field = "mean_power_w", label = "mean GPU power (W)" },
}

-- The run's headline figures (results.json's benchmarks, run): path from the run's view.
M.RUN_METRICS = {
  { id = "single_stream_tokens_per_second", path = { "throughput", "tokens_per_second" }, label = "single-stream output tok/s", better = "higher" },
  { id = "ttft_ms", path = { "latency", "time_to_first_token_ms" }, label = "time to first token (ms)", better = "lower", digits = 2 },
  { id = "headline_output_tokens_per_second", path = { "efficiency", "output_tokens_per_s" }, label = "output tok/s at the headline load", better = "higher" },
  { id = "headline_usd_per_million_output_tokens", path = { "efficiency", "usd_per_million_output_tokens" }, label = "USD per million output tokens, steady-state, headline load", better = "lower", digits = 4 },
  { id = "all_in_usd_per_million_output_tokens", path = { "efficiency", "all_in", "usd_per_million_output_tokens" }, label = "USD per million output tokens, all-in (whole run)", better = "lower", digits = 4 },
  { id = "peak_power_w", path = { "power", "peak_w" }, label = "peak GPU power (W)", digits = 0 },
  { id = "gpu_energy_j", path = { "power", "energy_j" }, label = "GPU energy, whole sampling (J)", digits = 0 },
  { id = "vram_peak_gib", path = { "memory", "vram_peak_gib" }, label = "peak VRAM (GiB)" },
}

-- Every name --threshold takes: a metric's id, or its results.json field name.
local BY_NAME = {}
for _, list in ipairs({ M.LOAD_METRICS, M.RUN_METRICS }) do
  for _, m in ipairs(list) do
    BY_NAME[m.id] = m.id
    if m.field then BY_NAME[m.field] = m.id end
  end
end
local BETTER = {}
for _, list in ipairs({ M.LOAD_METRICS, M.RUN_METRICS }) do for _, m in ipairs(list) do BETTER[m.id] = m.better end end

local at = manifest.at

-- "METRIC=PCT" as { metric = id, pct = n, spec = text }, or nil and the usage error.
function M.parse_threshold(spec)
  local name, pct = tostring(spec):match("^([^=]+)=([^=]+)$")
  pct = tonumber(pct)
  if not name or not finite(pct) then
    return nil, string.format("--threshold expects METRIC=PCT, such as output_tokens_per_second=-5, got '%s'", tostring(spec))
  end
  local id = BY_NAME[name]
  if not id then
    local near = errors.suggest(name, BY_NAME)
    local names = {}
    for _, list in ipairs({ M.LOAD_METRICS, M.RUN_METRICS }) do
      for _, m in ipairs(list) do if m.better then names[#names + 1] = m.id end end
    end
    return nil, string.format("--threshold: unknown metric '%s'%s; metrics: %s", name,
      near and (" (did you mean '" .. near .. "'?)") or "", table.concat(names, ", "))
  end
  if not BETTER[id] then
    return nil, string.format("--threshold: '%s' has no better direction (it is shown, not judged); pick a throughput, latency, cost or efficiency metric", name)
  end
  return { metric = id, pct = pct, spec = tostring(spec) }
end

-- The interval repeats gave a figure, where a run has one: load.intervals[field], or load[field .. "_ci"].
local function interval_of(load, field)
  if type(load) ~= "table" then return nil end
  return comparison.interval(type(load.intervals) == "table" and load.intervals[field] or nil) or comparison.interval(load[field .. "_ci"])
end

-- One side of the comparison per run, or per machine of a report of several machines.
local function sides_of(run, doc)
  local b = type(doc.benchmarks) == "table" and doc.benchmarks or {}
  local rec = type(doc.run) == "table" and doc.run or {}
  local id = at(doc, { "manifest", "runara", "run_id" }) or rec.run_id
  local base = { label = run.label, dir = run.dir, run_id = type(id) == "string" and id or nil,
                 script = type(rec.script) == "string" and rec.script or nil, status = rec.status, start_utc = rec.start_utc,
                 simulated = at(doc, { "metadata", "simulated" }) == true or at(doc, { "report", "simulated" }) == true,
                 report_status = at(doc, { "report", "status" }) }
  local loads = type(b.loads) == "table" and b.loads or {}
  local function side(label, bench, selected, machine_key, machine_label)
    local s = {}
    for k, v in pairs(base) do s[k] = v end
    s.label, s.benchmarks, s.loads, s.machine = label, bench, selected, machine_key
    s.doc, s.machine_label = doc, machine_label  -- for the workload check (run_comparison_workload.lua)
    s.manifest = manifest.fields(doc, machine_key, base.run_id)
    if machine_key then
      s.gpu = at(doc, { "machines", machine_key, "gpu" })
    else
      s.gpu = at(doc, { "metadata", "gpu" })
    end
    return s
  end
  if type(b.machines) == "table" and next(b.machines) then
    local order = type(at(doc, { "comparison", "machines" })) == "table" and doc.comparison.machines or nil
    if not order then
      order = {}
      for k in pairs(b.machines) do order[#order + 1] = k end
      table.sort(order)
    end
    local out = {}
    for _, key in ipairs(order) do
      local mlabel = at(doc, { "machines", key, "label" }) or key
      local selected = {}
      local prefix = tostring(mlabel) .. " "
      for name, l in pairs(loads) do
        if type(name) == "string" and name:sub(1, #prefix) == prefix then selected[name:sub(#prefix + 1)] = l end
      end
      out[#out + 1] = side(run.label .. " " .. tostring(mlabel), b.machines[key], selected, key, tostring(mlabel))
    end
    return out
  end
  return { side(run.label, b, loads, nil) }
end

-- Whether a side has any figure this comparison knows.
local function has_figures(s)
  for _, l in pairs(s.loads) do
    if type(l) == "table" then for _, m in ipairs(M.LOAD_METRICS) do if finite(l[m.field]) then return true end end end
  end
  for _, m in ipairs(M.RUN_METRICS) do if finite(at(s.benchmarks, m.path)) then return true end end
  return false
end

local function sorted_loads(sides)
  local seen, names = {}, {}
  for _, s in ipairs(sides) do
    for name, l in pairs(s.loads) do
      if type(name) == "string" and type(l) == "table" and not seen[name] then seen[name] = true names[#names + 1] = name end
    end
  end
  local function conc(name)
    for _, s in ipairs(sides) do
      local l = s.loads[name]
      if type(l) == "table" and finite(l.max_concurrency) then return l.max_concurrency end
    end
    return math.huge
  end
  table.sort(names, function(a, b)
    local ca, cb = conc(a), conc(b)
    if ca ~= cb then return ca < cb end
    return a < b
  end)
  return names
end

-- The comparison. runs: { {label =, dir =, doc = table or nil, problem = text or nil}, ... };
-- opts: baseline (index into runs, default 1), noise_pct, thresholds (list of "METRIC=PCT"),
-- allow_different_workloads (the runara compare flag: workload_differences are then marked, not refused).
-- Raises only for a malformed --threshold (the caller's usage error); everything about the
-- runs themselves is reported in the result.
function M.build(runs, opts)
  opts = opts or {}
  local noise = finite(opts.noise_pct) and opts.noise_pct or comparison.NOISE_PCT
  local thresholds = {}
  for _, spec in ipairs(opts.thresholds or {}) do
    local th, err = M.parse_threshold(spec)
    if not th then error(err, 0) end
    th.crossed = {}
    thresholds[#thresholds + 1] = th
  end
  local out = { format = M.FORMAT, noise_pct = noise, runs = {}, skipped = {}, loads = {}, not_shared = {},
                rows = {}, manifest_differences = {}, thresholds = thresholds, summary = {} }
  local sides, labels = {}, {}
  local baseline_index = opts.baseline or 1
  for i, run in ipairs(runs) do
    local ok_doc = type(run.doc) == "table"
    local problem = run.problem or (not ok_doc and "no results.json") or nil
    local made = {}
    if not problem then
      local ok, res = pcall(sides_of, run, run.doc)
      if ok then made = res else problem = "results.json has a layout this comparison cannot read (" .. tostring(res) .. ")" end
    end
    for _, s in ipairs(made) do
      if not has_figures(s) then
        out.skipped[#out.skipped + 1] = { label = s.label, dir = s.dir,
          problem = "no figures this comparison knows (no benchmarks.loads, throughput or latency: a results.json of an older format, or a script of its own)" }
      else
        local n, label = 1, s.label
        while labels[s.label] do  -- the same run named twice (a run against itself)
          n = n + 1
          s.label = label .. " (" .. n .. ")"
        end
        labels[s.label] = true
        s.key = s.label
        s.baseline_run = i == baseline_index
        sides[#sides + 1] = s
      end
    end
    if problem then out.skipped[#out.skipped + 1] = { label = run.label, dir = run.dir, problem = problem } end
  end
  local base
  for _, s in ipairs(sides) do if s.baseline_run then base = s break end end
  if not base and #sides > 0 then
    if #out.skipped > 0 then out.baseline_note = "the baseline named could not be compared; the first readable run stands in" end
    base = sides[1]
  end
  -- The baseline first, the others in the order given.
  if base then
    local ordered = { base }
    for _, s in ipairs(sides) do if s ~= base then ordered[#ordered + 1] = s end end
    sides = ordered
  end
  out.sides = sides
  out.baseline = base and base.key or nil
  for _, s in ipairs(sides) do
    out.runs[#out.runs + 1] = { label = s.label, dir = s.dir, run_id = s.run_id, script = s.script, status = s.status,
                                report_status = s.report_status, simulated = s.simulated, start_utc = s.start_utc,
                                gpu = s.gpu, machine = s.machine, baseline = s == base }
  end
  if #sides < 2 then
    out.error = #sides == 0 and "none of the runs could be compared" or
                ("only one run could be compared (" .. sides[1].label .. "); a comparison needs two")
    return out
  end
  local counts = {}
  for _, s in ipairs(sides) do if s ~= base then counts[s.key] = { better = 0, worse = 0, ["within noise"] = 0 } end end
  local function add_row(group, load_name, m, values, intervals)
    if not finite(values[base.key]) then return end
    local any = false
    for _, s in ipairs(sides) do if s ~= base and finite(values[s.key]) then any = true end end
    if not any then return end
    local row = { group = group, load = load_name, id = m.id, metric = m.label, better = m.better, digits = m.digits,
                  values = values, intervals = intervals, verdicts = {} }
    for _, s in ipairs(sides) do
      if s ~= base and finite(values[s.key]) then
        local verdict, pct, basis
        if m.points then
          -- A rate: the difference in percentage points, judged against m.points of them.
          pct = (values[s.key] - values[base.key]) * 100
          verdict = math.abs(pct) <= m.points and "within noise" or ((comparison.gain_pct(pct, m.better) > 0) and "better" or "worse")
          basis = string.format("the difference in percentage points, against ±%g of them", m.points)
        else
          verdict, pct, basis = comparison.verdict(values[base.key], values[s.key], m.better,
            { noise_pct = noise, base_interval = intervals[base.key], interval = intervals[s.key] })
        end
        row.verdicts[s.key] = { verdict = verdict, difference_pct = pct, basis = basis }
        if verdict then counts[s.key][verdict] = counts[s.key][verdict] + 1 end
        for _, th in ipairs(thresholds) do
          local gain = comparison.gain_pct(pct, m.better)
          if th.metric == m.id and gain and gain < th.pct then
            th.crossed[#th.crossed + 1] = { run = s.key, load = load_name, difference_pct = pct, gain_pct = gain }
          end
        end
      end
    end
    out.rows[#out.rows + 1] = row
  end
  -- The runs' headline figures.
  for _, m in ipairs(M.RUN_METRICS) do
    local values = {}
    for _, s in ipairs(sides) do values[s.key] = at(s.benchmarks, m.path) end
    add_row("whole run", nil, m, values, {})
  end
  -- The loads they share with the baseline.
  for _, name in ipairs(sorted_loads(sides)) do
    local have = {}
    for _, s in ipairs(sides) do if type(s.loads[name]) == "table" then have[#have + 1] = s.label end end
    if type(base.loads[name]) == "table" and #have >= 2 then
      out.loads[#out.loads + 1] = name
      for _, m in ipairs(M.LOAD_METRICS) do
        local values, intervals = {}, {}
        for _, s in ipairs(sides) do
          local l = s.loads[name]
          if type(l) == "table" then
            if m.compute then values[s.key] = m.compute(l) else values[s.key], intervals[s.key] = l[m.field], interval_of(l, m.field) end
          end
        end
        add_row("load " .. name, name, m, values, intervals)
      end
    else
      out.not_shared[#out.not_shared + 1] = { load = name, runs = have }
    end
  end
  if #out.rows == 0 then
    out.error = "the runs have no figure in common to compare: no load of the same name, and no headline figure both measured"
  elseif #out.loads == 0 and #out.not_shared > 0 then
    out.note = "the runs share no load (by name); only their headline figures are compared"
  end
  -- Whether repeats gave intervals anywhere: then the verdicts say so.
  out.intervals_used = false
  for _, r in ipairs(out.rows) do for _, v in pairs(r.verdicts) do if v.basis and v.basis:find("intervals") then out.intervals_used = true end end end
  for _, s in ipairs(sides) do
    if s ~= base then out.summary[#out.summary + 1] = { run = s.key, against = base.key, better = counts[s.key].better,
      worse = counts[s.key].worse, within_noise = counts[s.key]["within noise"] } end
  end
  -- Like with like: how each run's workload differs from the baseline's (simulated or real,
  -- profile, engine, each shared load's prompt set and output length, an open loop's TTFT origin).
  -- Refused unless allowed.
  local others = {}
  for _, s in ipairs(sides) do if s ~= base then others[#others + 1] = s end end
  out.workload_differences = workload.differences(base, others)
  out.different_workloads_allowed = opts.allow_different_workloads and true or false
  if #out.workload_differences > 0 then
    out.workload_line = workload.line(out.workload_differences, base.key)
  end
  -- Manifest differences: every field whose text is not the same in all runs (the baseline first).
  out.manifest_differences = manifest.differences(sides, 200)
  out.crossed = 0
  for _, th in ipairs(thresholds) do out.crossed = out.crossed + #th.crossed end
  return out
end

-- compare.json: the comparison without the renderers' working data.
function M.json(cmp)
  local metrics = {}
  for _, r in ipairs(cmp.rows) do
    metrics[#metrics + 1] = { group = r.group, load = r.load, id = r.id, metric = r.metric, better = r.better,
                              values = r.values, intervals = next(r.intervals or {}) and r.intervals or nil, verdicts = r.verdicts }
  end
  local thresholds = {}
  for _, th in ipairs(cmp.thresholds) do
    thresholds[#thresholds + 1] = { spec = th.spec, metric = th.metric, pct = th.pct, crossed = th.crossed, passed = #th.crossed == 0 }
  end
  return { format = cmp.format, baseline = cmp.baseline, noise_pct = cmp.noise_pct,
           verdict_rule = M.rule(cmp), runs = cmp.runs, skipped = cmp.skipped, loads_compared = cmp.loads,
           loads_not_shared = cmp.not_shared, metrics = metrics, summary = cmp.summary,
           manifest_differences = cmp.manifest_differences, thresholds = thresholds, thresholds_crossed = cmp.crossed or 0,
           workload_differences = cmp.workload_differences, different_workloads_allowed = cmp.different_workloads_allowed,
           error = cmp.error, note = cmp.note, baseline_note = cmp.baseline_note }
end

-- The rule the verdicts follow, in words (the reports and compare.json say it).
function M.rule(cmp)
  local band = string.format("%g", cmp.noise_pct)
  return "better or worse than the baseline when the difference is beyond ±" .. band .. " % (the noise band; --noise PCT sets it)" ..
         (cmp.intervals_used and ", or, where both runs carry an interval from repeats, when the intervals do not overlap" or
          "; no run carries intervals from repeats, so the band stands in for them") .. "; within noise otherwise"
end

return M
