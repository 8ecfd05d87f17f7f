-- runara.run_comparison_render: compare.md and compare.html from a comparison of runs
-- (run_comparison.lua). Pure: text in, text out. The tables are the reports' own
-- (report_comparison_rows.compare_table, the one a scenario's report of several machines uses),
-- the page has the reports' style and their inline SVG charts (report_svg.lua): one
-- self-contained file, nothing fetched.
local format = require("runara.report_format")
local rows_ = require("runara.report_comparison_rows")
local markdown = require("runara.report_markdown")
local html = require("runara.report_html")
local comparison = require("runara.comparison")
local rc = require("runara.run_comparison")

local finite, esc, cell, line = format.finite, format.esc, format.md_escape, format.md_line

local M = {}

local function title(cmp)
  return string.format("Comparison of %d runs", #cmp.runs)
end

-- The tables: { { name =, rows = } }, the run's headline figures first, then a table per load.
local function groups(cmp)
  local out, at = {}, {}
  for _, r in ipairs(cmp.rows) do
    if not at[r.group] then
      at[r.group] = { name = r.group, rows = {} }
      out[#out + 1] = at[r.group]
    end
    local g = at[r.group].rows
    g[#g + 1] = r
  end
  return out
end

-- What compare_table takes: the runs as its "machines", the group's rows as its comparison.
local function table_view(cmp, rows)
  local machines = {}
  for _, r in ipairs(cmp.runs) do machines[#machines + 1] = { key = r.label, label = r.label } end
  return { machines = machines, compare = { rows = rows, baseline = cmp.baseline, mark_baseline = true }, simulated = false }
end

local RUN_COLUMNS = { "run", "script", "GPU", "started (UTC)", "status", "simulated", "folder" }
local function run_rows(cmp)
  local out = {}
  for _, r in ipairs(cmp.runs) do
    out[#out + 1] = { r.label .. (r.baseline and " (baseline)" or ""), r.script or "—", r.gpu or "—", r.start_utc or "—",
      tostring(r.status or "—") .. ((r.report_status == "partial") and ", report PARTIAL" or ""), r.simulated and "yes" or "no", r.dir or "—" }
  end
  return out
end

local function summary_lines(cmp)
  local out = {}
  for _, s in ipairs(cmp.summary) do
    local differ = false
    for _, d in ipairs(cmp.workload_differences or {}) do differ = differ or d.run == s.run end
    out[#out + 1] = string.format("%s against %s: %d better, %d worse, %d within noise%s", s.run, s.against, s.better, s.worse, s.within_noise,
      differ and " (DIFFERENT WORKLOADS)" or "")
  end
  return out
end

local function threshold_lines(cmp)
  local out = {}
  for _, th in ipairs(cmp.thresholds) do
    if #th.crossed == 0 then
      out[#out + 1] = string.format("--threshold %s: passed", th.spec)
    else
      local where = {}
      for i, c in ipairs(th.crossed) do
        if i > 5 then where[#where + 1] = string.format("and %d more", #th.crossed - 5) break end
        where[#where + 1] = string.format("%s%s %s", c.run, c.load and (" at " .. c.load) or "", comparison.text(nil, c.difference_pct))
      end
      out[#out + 1] = string.format("--threshold %s: CROSSED (%s)", th.spec, table.concat(where, "; "))
    end
  end
  return out
end

local function manifest_table(cmp)
  local cols = { "field" }
  for _, r in ipairs(cmp.runs) do cols[#cols + 1] = r.label end
  local rows = {}
  for _, d in ipairs(cmp.manifest_differences) do
    local row = { d.field }
    for _, r in ipairs(cmp.runs) do row[#row + 1] = d.values[r.label] or "—" end
    rows[#rows + 1] = row
  end
  return cols, rows
end

local function other_lines(cmp)
  local out = {}
  for _, n in ipairs(cmp.not_shared) do
    out[#out + 1] = string.format("load %s: only in %s", n.load, #n.runs > 0 and table.concat(n.runs, ", ") or "no run")
  end
  for _, s in ipairs(cmp.skipped) do out[#out + 1] = string.format("run %s (%s) not compared: %s", s.label, s.dir or "?", s.problem) end
  return out
end

local function banners(cmp)
  local out = {}
  if cmp.error then out[#out + 1] = "NOTHING COMPARED: " .. cmp.error end
  if cmp.workload_line then
    out[#out + 1] = "WORKLOADS DIFFER (compared anyway: --allow-different-workloads): " .. cmp.workload_line ..
      "; the differences below are not the machines' or the software's alone"
  end
  local sim = {}
  for _, r in ipairs(cmp.runs) do if r.simulated then sim[#sim + 1] = r.label end end
  if #sim > 0 then out[#out + 1] = "SIMULATED: " .. table.concat(sim, ", ") .. " ran on the simulated cloud (runara --sim); their figures are not measurements of real hardware" end
  if cmp.crossed and cmp.crossed > 0 then out[#out + 1] = string.format("THRESHOLDS CROSSED: %d (exit status 4)", cmp.crossed) end
  return out
end

function M.markdown(cmp)
  local out = { "# " .. cell(title(cmp)), "" }
  for _, b in ipairs(banners(cmp)) do out[#out + 1] = "> **" .. cell(b) .. "**\n" end
  out[#out + 1] = line("Verdicts: " .. rc.rule(cmp) .. ".") .. "\n"
  if cmp.note then out[#out + 1] = line(cmp.note) .. "\n" end
  if cmp.baseline_note then out[#out + 1] = line(cmp.baseline_note) .. "\n" end
  out[#out + 1] = "## Runs\n\n" .. markdown.table(RUN_COLUMNS, run_rows(cmp)) .. "\n"
  local sl = summary_lines(cmp)
  if #sl > 0 then
    out[#out + 1] = "## Summary\n"
    for _, l in ipairs(sl) do out[#out + 1] = "- " .. cell(l) end
    out[#out + 1] = ""
  end
  local tl = threshold_lines(cmp)
  if #tl > 0 then
    out[#out + 1] = "## Thresholds\n"
    for _, l in ipairs(tl) do out[#out + 1] = "- " .. cell(l) end
    out[#out + 1] = ""
  end
  for _, g in ipairs(groups(cmp)) do
    local cols, rows = rows_.compare_table(table_view(cmp, g.rows))
    out[#out + 1] = "## " .. cell(g.name:gsub("^%l", string.upper)) .. "\n\n" .. markdown.table(cols, rows) .. "\n"
  end
  if #cmp.manifest_differences > 0 then
    local cols, rows = manifest_table(cmp)
    out[#out + 1] = "## Manifest differences\n\nWhat the runs ran with, where it differs (each run's results.json holds the whole manifest).\n\n" ..
                    markdown.table(cols, rows) .. "\n"
  elseif #cmp.runs >= 2 then
    out[#out + 1] = "## Manifest differences\n\nNone: the runs' manifests agree on every field compared.\n"
  end
  local ol = other_lines(cmp)
  if #ol > 0 then
    out[#out + 1] = "## Not compared\n"
    for _, l in ipairs(ol) do out[#out + 1] = "- " .. cell(l) end
    out[#out + 1] = ""
  end
  out[#out + 1] = "Written by runara compare: compare.md, compare.html, compare.json (every figure and verdict).\n"
  return table.concat(out, "\n")
end

-- A series per run of a load figure against the load's concurrency (loads they share), each run
-- in its own colour in every chart. Of two loads at one concurrency (the suite's throughput and
-- TTFT loads, both single-stream) the first in the tables' order stands for it.
local function by_concurrency(cmp, colors, field, transform)
  local series = {}
  for i, r in ipairs(cmp.runs) do
    local side = cmp.sides and cmp.sides[i]
    local pts, seen = {}, {}
    for _, name in ipairs(cmp.loads) do
      local l = side and side.loads[name]
      if type(l) == "table" and finite(l.max_concurrency) and not seen[l.max_concurrency] then
        local y = transform and transform(name, l, r) or l[field]
        if finite(y) then
          seen[l.max_concurrency] = true
          pts[#pts + 1] = { l.max_concurrency, y }
        end
      end
    end
    table.sort(pts, function(a, b) return a[1] < b[1] end)
    if #pts > 0 then series[#series + 1] = { name = r.label, points = pts, dash = r.baseline, color = colors[(i - 1) % #colors + 1] } end
  end
  return series
end

function M.html(cmp, svg)
  local out = { '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
                "<title>" .. esc(title(cmp)) .. "</title><style>" .. html.CSS ..
                ".better{color:#1b6e20;font-weight:600}.worse{color:#8a1c12;font-weight:600}</style></head><body><main>",
                "<h1>" .. esc(title(cmp)) .. "</h1>" }
  for _, b in ipairs(banners(cmp)) do
    out[#out + 1] = '<div class="banner ' .. (b:match("^SIMULATED") and "simulated" or "partial") .. '">' .. esc(b) .. "</div>"
  end
  out[#out + 1] = '<p class="note" id="rule">Verdicts: ' .. esc(rc.rule(cmp)) .. ".</p>"
  if cmp.note then out[#out + 1] = '<p class="note">' .. esc(cmp.note) .. "</p>" end
  if cmp.baseline_note then out[#out + 1] = '<p class="note">' .. esc(cmp.baseline_note) .. "</p>" end
  out[#out + 1] = "<h2>Runs</h2>" .. html.table(RUN_COLUMNS, run_rows(cmp), "runs")
  local sl = summary_lines(cmp)
  if #sl > 0 then
    out[#out + 1] = '<h2>Summary</h2><ul id="summary">'
    for _, l in ipairs(sl) do out[#out + 1] = "<li>" .. esc(l) .. "</li>" end
    out[#out + 1] = "</ul>"
  end
  local tl = threshold_lines(cmp)
  if #tl > 0 then
    out[#out + 1] = '<h2>Thresholds</h2><ul id="thresholds">'
    for _, l in ipairs(tl) do out[#out + 1] = '<li class="' .. (l:find("CROSSED", 1, true) and "worse" or "better") .. '">' .. esc(l) .. "</li>" end
    out[#out + 1] = "</ul>"
  end
  local tput = by_concurrency(cmp, svg.COLORS, "output_throughput")
  if #tput > 0 then
    out[#out + 1] = "<h2>Charts</h2>"
    out[#out + 1] = svg.chart{ title = "Output throughput by load", x_label = "concurrent requests (the load's)", y_label = "output tokens/s", xlog = true, series = tput }
    local ttft = by_concurrency(cmp, svg.COLORS, "median_ttft_ms")
    if #ttft > 0 then
      out[#out + 1] = svg.chart{ title = "TTFT p50 by load", x_label = "concurrent requests (the load's)", y_label = "milliseconds", xlog = true, series = ttft }
    end
    local base_side
    for _, s in ipairs(cmp.sides or {}) do if s.key == cmp.baseline then base_side = s end end
    local diff = by_concurrency(cmp, svg.COLORS, nil, function(name, l, r)
      if r.baseline or not base_side then return nil end
      local b = base_side.loads[name]
      return type(b) == "table" and comparison.difference_pct(b.output_throughput, l.output_throughput) or nil
    end)
    if #diff > 0 then
      out[#out + 1] = svg.chart{ title = "Output throughput against the baseline (" .. tostring(cmp.baseline) .. ")", x_label = "concurrent requests (the load's)",
        y_label = "difference, %", xlog = true, series = diff,
        note = string.format("within ±%g %%: noise", cmp.noise_pct) }
    end
  end
  for _, g in ipairs(groups(cmp)) do
    local cols, rows = rows_.compare_table(table_view(cmp, g.rows))
    local id = g.name:gsub("[^%w_]+", "-")
    out[#out + 1] = "<h2>" .. esc((g.name:gsub("^%l", string.upper))) .. "</h2>" .. html.table(cols, rows, id)
  end
  if #cmp.manifest_differences > 0 then
    local cols, rows = manifest_table(cmp)
    out[#out + 1] = '<h2>Manifest differences</h2><p class="note">What the runs ran with, where it differs (each run\'s results.json holds the whole manifest).</p>' ..
                    html.table(cols, rows, "manifest")
  elseif #cmp.runs >= 2 then
    out[#out + 1] = '<h2>Manifest differences</h2><p class="note">None: the runs\' manifests agree on every field compared.</p>'
  end
  local ol = other_lines(cmp)
  if #ol > 0 then
    out[#out + 1] = '<h2>Not compared</h2><ul id="not-compared">'
    for _, l in ipairs(ol) do out[#out + 1] = "<li>" .. esc(l) .. "</li>" end
    out[#out + 1] = "</ul>"
  end
  out[#out + 1] = '<p class="note">Written by runara compare: compare.md, compare.html, compare.json (every figure and verdict).</p></main></body></html>\n'
  local page = table.concat(out, "\n")
  -- Verdict cells coloured: the text already says it; the colour helps the eye down a long table.
  page = page:gsub("<td>([^<]-, better)</td>", '<td class="better">%1</td>'):gsub("<td>([^<]-, worse)</td>", '<td class="worse">%1</td>')
  return page
end

return M
