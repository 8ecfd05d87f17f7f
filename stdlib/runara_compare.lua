-- The scenario behind `runara compare` (docs/cli.md#runara-compare): the runs the command line
-- named, read through compare_gate (cli/compare_gate.hpp: their results.json, and nothing else of
-- theirs), compared by runara.run_comparison, written as compare.json, compare.md and
-- compare.html into this run's folder. run(params) takes runara.params as the command set them:
-- run1=DIR label1=ID ... (the baseline first), threshold1=METRIC=PCT ..., noise=PCT,
-- allow_different_workloads=1 (runs whose workloads differ are refused without it).
local rc = require("runara.run_comparison")
local render = require("runara.run_comparison_render")
local svg = require("runara.report_svg")
local comparison = require("runara.comparison")

local M = {}

-- A run's name in the tables: its run id where its results.json has one (what `runara runs`
-- lists), else the id the history gave, else the folder's name.
local function label_of(params, i, doc)
  local id = type(doc) == "table" and ((type(doc.manifest) == "table" and type(doc.manifest.runara) == "table" and doc.manifest.runara.run_id)
                                      or (type(doc.run) == "table" and doc.run.run_id))
  if type(id) == "string" and id ~= "" then return id end
  local given = params["label" .. i] or params["run" .. i]
  return (given:gsub("/+$", ""):match("[^/]+$")) or given
end

function M.run(params)
  local runs, i = {}, 1
  while params["run" .. i] do
    local dir = params["run" .. i]
    local doc, problem = compare_gate.read_results(dir)
    runs[#runs + 1] = { label = label_of(params, i, doc), dir = dir, doc = doc, problem = problem }
    i = i + 1
  end
  local thresholds, j = {}, 1
  while params["threshold" .. j] do
    thresholds[#thresholds + 1] = params["threshold" .. j]
    j = j + 1
  end
  local allow = params.allow_different_workloads == "1"
  local ok, cmp = pcall(rc.build, runs, { noise_pct = tonumber(params.noise), thresholds = thresholds, allow_different_workloads = allow })
  if not ok then error("runara compare: usage: " .. tostring(cmp), 0) end
  -- Unlike with unlike is refused before anything is written (the command exits 2, one line).
  if cmp.workload_line and not allow then
    error("runara compare: refused: the runs measured different workloads (" .. cmp.workload_line ..
          "); compare runs of the same workload, or add --allow-different-workloads to compare them anyway", 0)
  end
  runara.write_file("compare.json", rc.json(cmp))
  runara.write_file("compare.md", render.markdown(cmp))
  runara.write_file("compare.html", render.html(cmp, svg))
  if cmp.workload_line then
    print("WORKLOADS DIFFER (compared anyway: --allow-different-workloads): " .. cmp.workload_line ..
          "; the differences below are not the machines' or the software's alone")
  end
  for _, s in ipairs(cmp.skipped) do print(("not compared: %s (%s): %s"):format(s.label, s.dir or "?", s.problem)) end
  if cmp.note then print(cmp.note) end
  for _, s in ipairs(cmp.summary) do
    local differ = false
    for _, d in ipairs(cmp.workload_differences or {}) do differ = differ or d.run == s.run end
    print(("%s against %s: %d better, %d worse, %d within noise (±%g %%)%s"):format(s.run, s.against, s.better, s.worse, s.within_noise,
      cmp.noise_pct, differ and " — DIFFERENT WORKLOADS" or ""))
    local shown = 0
    for _, r in ipairs(cmp.rows) do
      local vd = r.verdicts[s.run]
      if vd and vd.verdict == "worse" and shown < 8 then
        shown = shown + 1
        print(("  worse: %s%s %s"):format(r.metric, r.load and (" at " .. r.load) or "", comparison.text(nil, vd.difference_pct)))
      end
    end
  end
  for _, th in ipairs(cmp.thresholds) do
    if #th.crossed == 0 then
      print(("threshold %s: passed"):format(th.spec))
    else
      for _, c in ipairs(th.crossed) do
        compare_gate.crossed(("%s: %s%s %s than %s"):format(th.spec, c.run, c.load and (" at " .. c.load) or "",
          comparison.text(nil, c.difference_pct), cmp.baseline))
      end
    end
  end
  print(("compare: %s/compare.html  (also compare.md, compare.json)"):format(runara.out_dir()))
  if cmp.error then error("runara compare: " .. cmp.error .. " (compare.md says what each run holds)", 0) end
end

return M
