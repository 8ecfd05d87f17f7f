-- runara.report_markdown: report.md from a report's view (see report_document.lua). Pure: text
-- in, text out. A section appears only when the view has its data; with several machines every
-- table has a column (or row) per machine.
local format = require("runara.report_format")
local text = require("runara.report_text")
local top_rows = require("runara.report_comparison_rows")
local load_rows = require("runara.report_load_rows")
local gpu_rows_ = require("runara.report_gpu_rows")
local metric_rows_ = require("runara.report_metric_rows")
local manifest = require("runara.manifest")
local thresholds = require("runara.report_thresholds")

local f, cell, line_text, multi, with_machine_column = format.f, format.md_escape, format.md_line, format.multi, format.with_machine_column
local banner, top_line, cost_line, where_line, files_line = text.banner, text.top_line, text.cost_line, text.where_line, text.files_line
local sweep_title, table_title = text.sweep_title, text.table_title
local MACHINE_COLUMNS, machine_rows = top_rows.MACHINE_COLUMNS, top_rows.machine_rows
local compare_table, reference_rows = top_rows.compare_table, top_rows.reference_rows
local samples, LOAD_COLUMNS, load_row = load_rows.samples, load_rows.LOAD_COLUMNS, load_rows.load_row
local loads_table, few_note, schedule_note = load_rows.loads_table, load_rows.few_note, load_rows.schedule_note
local efficiency_table, EFFICIENCY_NOTE, energy_load_notes = load_rows.efficiency_table, load_rows.EFFICIENCY_NOTE, load_rows.energy_load_notes
local gpu_sets, GPU_COLUMNS, gpu_rows = gpu_rows_.gpu_sets, gpu_rows_.GPU_COLUMNS, gpu_rows_.gpu_rows
local PHASE_COLUMNS, phase_rows, energy_notes = gpu_rows_.PHASE_COLUMNS, gpu_rows_.phase_rows, gpu_rows_.energy_notes
local metric_sets, METRIC_COLUMNS, metric_rows = metric_rows_.metric_sets, metric_rows_.METRIC_COLUMNS, metric_rows_.metric_rows

local M = {}

local function md_table(columns, rows)
  local head = {}
  for i, c in ipairs(columns) do head[i] = cell(c) end
  local out = { "| " .. table.concat(head, " | ") .. " |", "|" .. string.rep(" --- |", #columns) }
  for _, r in ipairs(rows) do
    local cells = {}
    for i = 1, #columns do cells[i] = cell(r[i] == nil and "" or r[i]) end
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return table.concat(out, "\n")
end

M.table = md_table  -- (columns, rows) → a Markdown table, every cell escaped (run_comparison_render.lua)

function M.markdown(v)
  local out = { "# " .. cell(v.title), "" }
  for _, line in ipairs(banner(v)) do out[#out + 1] = "> **" .. cell(line) .. "**\n" end
  local crossed = thresholds.banner(v.gates or {})
  if crossed then out[#out + 1] = "> **" .. cell(crossed) .. "**\n" end
  local line = top_line(v)
  if line ~= "" then out[#out + 1] = line_text(line) out[#out + 1] = "" end
  if v.meta.ran_on then out[#out + 1] = "Ran on: " .. cell(v.meta.ran_on) out[#out + 1] = "" end
  local cost = cost_line(v.meta, multi(v))
  if cost then out[#out + 1] = cost out[#out + 1] = "" end
  if #(v.headlines or {}) > 0 then
    local rows = {}
    for i, h in ipairs(v.headlines) do
      local value, unit = text.headline_value(h)
      rows[i] = { h.label, value .. (unit ~= "" and (" " .. unit) or ""), h.note or "" }
    end
    out[#out + 1] = "## Headline\n"
    out[#out + 1] = md_table({ "Figure", "This run" .. (v.simulated and " (simulated)" or ""), "Notes" }, rows)
    out[#out + 1] = ""
  end
  if multi(v) then
    out[#out + 1] = "## Machines\n"
    out[#out + 1] = md_table(MACHINE_COLUMNS, machine_rows(v))
  end
  if v.compare then
    local cols, rows = compare_table(v)
    out[#out + 1] = "\n## Comparison\n"
    out[#out + 1] = md_table(cols, rows)
    if v.compare.ratio then out[#out + 1] = "\nSame model, same suite, same client; the machines measured at the same time. † from fewer requests than the figure needs (a p99 at least " .. ((v.min_samples or {}).p99 or 100) .. ", a median at least " .. ((v.min_samples or {}).median or 10) .. ")." end
  elseif v.reference then
    local rows = reference_rows(v)
    if #rows > 0 then
      out[#out + 1] = "## Comparison"
      out[#out + 1] = ""
      out[#out + 1] = md_table({ "Metric", "This run" .. (v.simulated and " (simulated)" or ""), v.reference.label, "Notes" }, rows)
      out[#out + 1] = "\nReference: " .. cell(v.reference.source)
      if v.reference.conditions then out[#out + 1] = "\nConditions differ from this run's: " .. cell(v.reference.conditions) end
    end
  end
  if v.gates and #v.gates > 0 then
    out[#out + 1] = "\n## Thresholds\n"
    out[#out + 1] = "The script's pass/fail gates on its loads; a crossed one makes the run exit with status 4.\n"
    out[#out + 1] = md_table(thresholds.COLUMNS, thresholds.rows(v.gates))
  end
  if #v.loads > 0 then
    local cols, rows, few, waited = loads_table(v, v.loads)
    out[#out + 1] = "\n## Loads\n"
    out[#out + 1] = md_table(cols, rows)
    local note = few_note(v, few)
    if note then out[#out + 1] = "\n" .. cell(note) end
    local late = schedule_note(waited)
    if late then out[#out + 1] = "\n" .. cell(late) end
  end
  local where = where_line(v)
  if where then out[#out + 1] = "\n" .. cell(where) end
  local ecols, erows = efficiency_table(v)
  if #erows > 0 then
    out[#out + 1] = "\n## Cost and efficiency\n"
    for _, l in ipairs(text.efficiency_lines(v)) do out[#out + 1] = line_text(l) .. "\n" end
    out[#out + 1] = md_table(ecols, erows)
    out[#out + 1] = "\n" .. cell(EFFICIENCY_NOTE)
    for _, n in ipairs(energy_load_notes(v)) do out[#out + 1] = "\nEnergy of " .. cell(n) end
  end
  for _, s in ipairs(v.sweeps) do
    local rows, few = {}, {}
    for _, m in ipairs(s.rows) do
      local row, flagged = load_row(v, m.label or "", m.max_concurrency, m)
      rows[#rows + 1] = row
      if flagged then few[#few + 1] = (m.label or "?") .. " " .. f(samples(m, "ttft"), 0) end
    end
    out[#out + 1] = "\n## " .. cell(sweep_title(v, s)) .. "\n"
    out[#out + 1] = md_table(LOAD_COLUMNS, rows)
    local note = few_note(v, few)
    if note then out[#out + 1] = "\n" .. cell(note) end
  end
  local sets = gpu_sets(v)
  if #sets > 0 then
    local rows, phases = {}, {}
    for _, s in ipairs(sets) do
      for _, r in ipairs(gpu_rows(s.gpu, s.label)) do rows[#rows + 1] = r end
      for _, r in ipairs(phase_rows(s.gpu, s.label)) do phases[#phases + 1] = r end
    end
    if #rows > 0 then
      out[#out + 1] = "\n## GPU\n"
      out[#out + 1] = md_table(with_machine_column(v, GPU_COLUMNS), rows)
    end
    if #phases > 0 then
      out[#out + 1] = "\n## GPU by phase\n"
      out[#out + 1] = md_table(with_machine_column(v, PHASE_COLUMNS), phases)
    end
    for _, s in ipairs(sets) do
      for _, n in ipairs(energy_notes(s.gpu, s.label)) do out[#out + 1] = "\nEnergy, " .. cell(n) end
    end
  end
  local msets = metric_sets(v)
  if #msets > 0 then
    local rows = {}
    for _, s in ipairs(msets) do for _, r in ipairs(metric_rows(s)) do rows[#rows + 1] = r end end
    if #rows > 0 then
      out[#out + 1] = "\n## Server metrics (vLLM /metrics)\n"
      local cols = METRIC_COLUMNS
      if multi(v) then cols = with_machine_column(v, METRIC_COLUMNS) end
      out[#out + 1] = md_table(cols, rows)
    end
  end
  for _, t in ipairs(v.tables) do
    out[#out + 1] = "\n## " .. cell(table_title(v, t)) .. "\n"
    if t.caption then out[#out + 1] = line_text(t.caption) .. "\n" end
    out[#out + 1] = md_table(t.columns, t.rows)
  end
  for _, c in ipairs(v.charts or {}) do
    out[#out + 1] = "\n## " .. cell(c.name) .. "\n"
    out[#out + 1] = "A chart in report.html; its points:\n"
    local rows = {}
    local function figure(x)  -- whole numbers (GPU counts, sizes) without decimals
      if format.finite(x) and x == math.floor(x) and math.abs(x) < 1e15 then return string.format("%d", x) end
      return format.fv(x, 2)
    end
    for _, sr in ipairs(c.series) do
      for _, p in ipairs(sr.points) do rows[#rows + 1] = { tostring(sr.name), figure(p[1]), figure(p[2]) } end
    end
    out[#out + 1] = md_table({ "series", c.x_label or "x", c.y_label or "y" }, rows)
  end
  local mrows = manifest.rows(v.manifest)
  if #mrows > 0 then
    out[#out + 1] = "\n## Manifest\n"
    out[#out + 1] = "What it takes to run this again (results.json's manifest holds every field).\n"
    out[#out + 1] = md_table({ "field", "value" }, mrows)
  end
  if v.error then out[#out + 1] = "\n## Error\n\n```text\n" .. format.controls(v.error):gsub("```", "'''") .. "\n```" end
  out[#out + 1] = "\n" .. cell(files_line(v)) .. "\n"
  return table.concat(out, "\n")
end

return M
