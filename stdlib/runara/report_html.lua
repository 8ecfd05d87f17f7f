-- runara.report_html: report.html from a report's view (see report_document.lua), one
-- self-contained page with its charts as inline SVG (report_svg.lua). Pure: text in, text out.
-- A section appears only when the view has its data; with several machines every table has a
-- column (or row) per machine and every chart a series per machine.
local format = require("runara.report_format")
local text = require("runara.report_text")
local top_rows = require("runara.report_comparison_rows")
local load_rows = require("runara.report_load_rows")
local gpu_rows_ = require("runara.report_gpu_rows")
local metric_rows_ = require("runara.report_metric_rows")
local series = require("runara.report_chart_series")
local manifest = require("runara.manifest")
local thresholds = require("runara.report_thresholds")

local finite, f, esc, multi, with_machine_column = format.finite, format.f, format.esc, format.multi, format.with_machine_column
local banner, top_line, cost_line, where_line, files_line = text.banner, text.top_line, text.cost_line, text.where_line, text.files_line
local sweep_title, table_title = text.sweep_title, text.table_title
local power_label, vram_label = text.power_label, text.vram_label
local MACHINE_COLUMNS, machine_rows = top_rows.MACHINE_COLUMNS, top_rows.machine_rows
local compare_table, reference_rows = top_rows.compare_table, top_rows.reference_rows
local samples, LOAD_COLUMNS, load_row = load_rows.samples, load_rows.LOAD_COLUMNS, load_rows.load_row
local loads_table, few_note, schedule_note = load_rows.loads_table, load_rows.few_note, load_rows.schedule_note
local efficiency_table, EFFICIENCY_NOTE, energy_load_notes = load_rows.efficiency_table, load_rows.EFFICIENCY_NOTE, load_rows.energy_load_notes
local gpu_sets, GPU_COLUMNS, gpu_rows = gpu_rows_.gpu_sets, gpu_rows_.GPU_COLUMNS, gpu_rows_.gpu_rows
local PHASE_COLUMNS, phase_rows, energy_notes = gpu_rows_.PHASE_COLUMNS, gpu_rows_.phase_rows, gpu_rows_.energy_notes
local metric_sets, METRIC_COLUMNS, metric_rows = metric_rows_.metric_sets, metric_rows_.METRIC_COLUMNS, metric_rows_.metric_rows
local concurrency_series, over_time, gpu_marks, metric_series = series.concurrency_series, series.over_time, series.gpu_marks, series.metric_series

local M = {}

local CSS = [[
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:1040px;margin:0 auto;padding:28px 32px 60px}
h1{font-size:26px;margin:0 0 6px}h2{font-size:19px;margin:34px 0 10px;border-bottom:1px solid #dde1e7;padding-bottom:4px}
.machine{color:#4a5364}.cost{color:#4a5364;font-size:14px}
.banner{padding:10px 14px;border-radius:6px;margin:12px 0;font-weight:600}
.banner.partial{background:#fdecea;color:#8a1c12;border:1px solid #f5c2bc}
.banner.simulated{background:#fff6dd;color:#6b4e00;border:1px solid #f0dc9b}
table{border-collapse:collapse;width:100%;background:#fff;font-size:14px;margin:6px 0}
th,td{padding:6px 10px;border-bottom:1px solid #e6e9ee;text-align:right}th:first-child,td:first-child{text-align:left}
th{background:#eef1f5;font-weight:600}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:12px;margin:16px 0}
.card{background:#fff;border:1px solid #e1e5eb;border-radius:8px;padding:12px 14px}
.card .v{font-size:24px;font-weight:650}.card .l{color:#5d6677;font-size:13px}.card .r{color:#5d6677;font-size:12px}
.chart{width:100%;height:auto;background:#fff;border:1px solid #e1e5eb;border-radius:8px;margin:8px 0}
.chart .title{font-weight:600;font-size:14px}.chart .tick{font-size:11px;fill:#5d6677}
.chart .axis-label{font-size:12px;fill:#39414f}.chart .grid{stroke:#edf0f4}.chart .axis{stroke:#9aa3b2}
.chart .legend text{font-size:12px;fill:#1d2330;stroke:none}.chart .mark line{stroke:#b0b7c3;stroke-dasharray:4 3}
.chart .mark text{font-size:10px;fill:#6b7484}.chart .empty{fill:#9aa3b2}.chart .chart-note{font-size:11px;fill:#8a5a00}
td.failed{color:#8a1c12;text-align:left;min-width:200px;overflow-wrap:anywhere}
#manifest td{text-align:left;overflow-wrap:anywhere}#manifest td:last-child{font-family:ui-monospace,Menlo,monospace;font-size:12px}
.note{color:#5d6677;font-size:13px}
pre.error{background:#fff;border:1px solid #f5c2bc;border-radius:6px;padding:10px;overflow-x:auto;font-size:12px;white-space:pre-wrap}
]]

local function html_table(columns, rows, id)
  local out = { "<table" .. (id and (' id="' .. esc(id) .. '"') or "") .. "><thead><tr>" }
  for _, c in ipairs(columns) do out[#out + 1] = "<th>" .. esc(c) .. "</th>" end
  out[#out + 1] = "</tr></thead><tbody>"
  for _, r in ipairs(rows) do
    out[#out + 1] = "<tr>"
    for i = 1, #columns do
      local text = r[i] == nil and "" or tostring(r[i])
      out[#out + 1] = (text:match("^failed") and '<td class="failed">' or "<td>") .. esc(text) .. "</td>"
    end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</tbody></table>"
  return table.concat(out)
end

M.CSS = CSS            -- the reports' style sheet (run_comparison_render.lua uses it too)
M.table = html_table   -- (columns, rows, id) → an HTML table, every cell escaped

-- The headline figures as cards, each with the reference's figure where one applies (the
-- reference's VRAM in its own unit, GB); then cost per million tokens and tokens per joule.
local function cards(v)
  local b, ref = v.b, v.reference
  local e = b.efficiency or {}
  local at = e.load and ("at " .. e.load) or nil
  local items = {
    { "single-stream output", b.throughput and b.throughput.tokens_per_second, "tok/s", ref and ref.throughput_tps },
    { "time to first token", b.latency and b.latency.time_to_first_token_ms, "ms", ref and ref.ttft_ms },
    { "32 concurrent output", b.concurrent and b.concurrent["32_requests_tokens_per_second"], "tok/s", ref and ref.concurrent_32_tps },
    { power_label(v), b.power and b.power.peak_w, "W" },
    { vram_label(v), b.memory and b.memory.vram_peak_gib, "GiB" },
    { "per million output tokens, steady-state" .. (at and (", " .. at) or ""), e.usd_per_million_output_tokens, "USD", nil, 2 },
    { "per million output tokens, all-in (whole run)", e.all_in and e.all_in.usd_per_million_output_tokens, "USD", nil, 2 },
    { "output tokens per joule" .. (at and (", " .. at) or ""), e.output_tokens_per_joule, "tok/J", nil, 3 },
  }
  local out = {}
  for _, h in ipairs(v.headlines or {}) do  -- the scenario's own headline first (rep:headline)
    local value, unit = text.headline_value(h)
    out[#out + 1] = string.format('<div class="card headline"><div class="v">%s <small>%s</small></div><div class="l">%s</div>%s</div>',
      esc(value), esc(unit), esc(h.label), h.note and ('<div class="r">' .. esc(h.note) .. "</div>") or "")
  end
  for _, it in ipairs(items) do
    if finite(it[2]) then
      out[#out + 1] = string.format('<div class="card"><div class="v">%s <small>%s</small></div><div class="l">%s</div>%s</div>',
        esc(f(it[2], it[5])), esc(it[3]), esc(it[1]), it[4] and ('<div class="r">' .. esc(ref.label) .. ": " .. esc(f(it[4])) .. "</div>") or "")
    end
  end
  if #out == 0 then return nil end
  return '<div class="cards">' .. table.concat(out) .. "</div>"
end

function M.html(v, svg)
  local out = { '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
                "<title>" .. esc(v.title) .. "</title><style>" .. CSS .. "</style></head><body><main>",
                "<h1>" .. esc(v.title) .. "</h1>" }
  local banners = banner(v)
  if v.error then out[#out + 1] = '<div class="banner partial" id="partial">' .. esc(banners[1]) .. "</div>" end
  if v.simulated then out[#out + 1] = '<div class="banner simulated" id="simulated">' .. esc(banners[v.error and 2 or 1]) .. "</div>" end
  local crossed = thresholds.banner(v.gates or {})
  if crossed then out[#out + 1] = '<div class="banner partial" id="thresholds-crossed">' .. esc(crossed) .. "</div>" end
  local line = top_line(v)
  if line ~= "" then out[#out + 1] = '<p class="machine">' .. esc(line) .. "</p>" end
  if v.meta.ran_on then out[#out + 1] = '<p class="machine" id="ran-on">Ran on: ' .. esc(v.meta.ran_on) .. "</p>" end
  local cost = cost_line(v.meta, multi(v))
  if cost then out[#out + 1] = '<p class="cost">' .. esc(cost) .. "</p>" end
  if multi(v) then
    out[#out + 1] = "<h2>Machines</h2>" .. html_table(MACHINE_COLUMNS, machine_rows(v), "machines")
  else
    local c = cards(v)
    if c then out[#out + 1] = c end
  end
  if v.compare then
    local cols, rows = compare_table(v)
    out[#out + 1] = "<h2>Comparison</h2>" .. html_table(cols, rows, "comparison")
    if v.compare.ratio then
      out[#out + 1] = '<p class="note">Same model, same suite, same client; the machines measured at the same time. † from fewer requests than the figure needs (a p99 at least ' ..
                      esc((v.min_samples or {}).p99 or 100) .. ", a median at least " .. esc((v.min_samples or {}).median or 10) .. ").</p>"
    end
  elseif v.reference then
    local rows = reference_rows(v)
    if #rows > 0 then
      out[#out + 1] = "<h2>Comparison</h2>" .. html_table({ "Metric", "This run" .. (v.simulated and " (simulated)" or ""), v.reference.label, "Notes" }, rows, "comparison")
      out[#out + 1] = '<p class="note">Reference: ' .. esc(v.reference.source) .. "</p>"
      if v.reference.conditions then out[#out + 1] = '<p class="note">Conditions differ from this run\'s: ' .. esc(v.reference.conditions) .. "</p>" end
    end
  end
  -- Charts against concurrency, where loads at several concurrencies (or a sweep) were measured.
  local sweep = #v.sweeps > 0
  local need = v.min_samples or { p99 = 100, median = 10 }
  -- Output and total tok/s on charts of their own: total (input included) is often ten times
  -- output, and on one axis output would sit flat along the bottom.
  local tput = concurrency_series(v, { { name = "output tok/s", field = "output_throughput" } })
  local total = concurrency_series(v, { { name = "total tok/s", field = "total_token_throughput" } })
  if #tput > 0 then
    out[#out + 1] = "<h2>Throughput and latency against concurrency</h2>"
    out[#out + 1] = svg.chart{ title = "Throughput vs concurrency", x_label = "concurrent requests", y_label = "output tokens/s", xlog = sweep, series = tput }
    if #total > 0 then
      out[#out + 1] = svg.chart{ title = "Total throughput vs concurrency", x_label = "concurrent requests", y_label = "input + output tokens/s", xlog = sweep, series = total }
    end
    for _, metric in ipairs({ { "TTFT", "ttft" }, { "TPOT", "tpot" } }) do
      local series, few = concurrency_series(v, {
        { name = metric[1] .. " p50", field = "median_" .. metric[2] .. "_ms", metric = metric[2], need = need.median },
        { name = metric[1] .. " p99", field = "p99_" .. metric[2] .. "_ms", metric = metric[2], need = need.p99, dash = true } })
      if #series > 0 then
        out[#out + 1] = svg.chart{ title = metric[1] .. " vs concurrency", x_label = "concurrent requests", y_label = "milliseconds", xlog = sweep,
          series = series, note = few and string.format("hollow points: fewer samples than the percentile needs (p99 < %d, p50 < %d)", need.p99, need.median) or nil }
      end
    end
  end
  local power = over_time(v, "power_w", 1, "power", "sum")
  local vram = over_time(v, "vram_used_bytes", 1 / format.GIB, "VRAM", "max")
  if #power > 0 or #vram > 0 then
    out[#out + 1] = "<h2>GPU over time</h2>"
    local marks = gpu_marks(v)
    local x_label = multi(v) and "seconds since each machine's sampling started" or "seconds since sampling started"
    if #power > 0 then out[#out + 1] = svg.chart{ title = "GPU power", x_label = x_label, y_label = "watts", series = power, marks = marks } end
    if #vram > 0 then out[#out + 1] = svg.chart{ title = "VRAM used", x_label = x_label, y_label = "GiB", series = vram, marks = marks } end
  end
  local running = metric_series(v, { "num_requests_running" }, "running", 1)
  for _, s in ipairs(metric_series(v, { "num_requests_waiting" }, "waiting", 1)) do s.dash = true running[#running + 1] = s end
  local kv = metric_series(v, { "kv_cache_usage_perc", "gpu_cache_usage_perc" }, "KV cache used", 100)
  if #running > 0 or #kv > 0 then
    out[#out + 1] = "<h2>Server (vLLM /metrics) over time</h2>"
    if #running > 0 then out[#out + 1] = svg.chart{ title = "Requests running and waiting", x_label = "seconds since scraping started", y_label = "requests", series = running } end
    if #kv > 0 then out[#out + 1] = svg.chart{ title = "KV cache used", x_label = "seconds since scraping started", y_label = "% of the KV cache", series = kv } end
  end
  if v.gates and #v.gates > 0 then
    out[#out + 1] = '<h2>Thresholds</h2><p class="note">The script\'s pass/fail gates on its loads; a crossed one makes the run exit with status 4.</p>' ..
      html_table(thresholds.COLUMNS, thresholds.rows(v.gates), "thresholds")
  end
  if #v.loads > 0 then
    local cols, rows, few, waited = loads_table(v, v.loads)
    out[#out + 1] = "<h2>Loads</h2>" .. html_table(cols, rows, "loads")
    local note = few_note(v, few)
    if note then out[#out + 1] = '<p class="note">' .. esc(note) .. "</p>" end
    local late = schedule_note(waited)
    if late then out[#out + 1] = '<p class="note">' .. esc(late) .. "</p>" end
  end
  local where = where_line(v)
  if where then out[#out + 1] = '<p class="note">' .. esc(where) .. "</p>" end
  local ecols, erows = efficiency_table(v)
  if #erows > 0 then
    out[#out + 1] = "<h2>Cost and efficiency</h2>"
    for _, l in ipairs(text.efficiency_lines(v)) do out[#out + 1] = '<p class="machine">' .. esc(l) .. "</p>" end
    out[#out + 1] = html_table(ecols, erows, "efficiency")
    out[#out + 1] = '<p class="note">' .. esc(EFFICIENCY_NOTE) .. "</p>"
    for _, n in ipairs(energy_load_notes(v)) do out[#out + 1] = '<p class="note energy-note">Energy of ' .. esc(n) .. "</p>" end
  end
  for _, s in ipairs(v.sweeps) do
    local rows, few = {}, {}
    for _, m in ipairs(s.rows) do
      local row, flagged = load_row(v, m.label or "", m.max_concurrency, m)
      rows[#rows + 1] = row
      if flagged then few[#few + 1] = (m.label or "?") .. " " .. f(samples(m, "ttft"), 0) end
    end
    out[#out + 1] = "<h2>" .. esc(sweep_title(v, s)) .. "</h2>" .. html_table(LOAD_COLUMNS, rows)
    local note = few_note(v, few)
    if note then out[#out + 1] = '<p class="note">' .. esc(note) .. "</p>" end
  end
  local sets = gpu_sets(v)
  local grows, phases = {}, {}
  for _, s in ipairs(sets) do
    for _, r in ipairs(gpu_rows(s.gpu, s.label)) do grows[#grows + 1] = r end
    for _, r in ipairs(phase_rows(s.gpu, s.label)) do phases[#phases + 1] = r end
  end
  if #grows > 0 then out[#out + 1] = "<h2>GPU summary</h2>" .. html_table(with_machine_column(v, GPU_COLUMNS), grows, "gpu") end
  if #phases > 0 then out[#out + 1] = "<h2>GPU by phase</h2>" .. html_table(with_machine_column(v, PHASE_COLUMNS), phases, "gpu-phases") end
  if #grows > 0 or #phases > 0 then
    for _, s in ipairs(sets) do
      for _, n in ipairs(energy_notes(s.gpu, s.label)) do out[#out + 1] = '<p class="note energy-note">Energy, ' .. esc(n) .. "</p>" end
    end
  end
  local mrows = {}
  for _, s in ipairs(metric_sets(v)) do for _, r in ipairs(metric_rows(s)) do mrows[#mrows + 1] = r end end
  if #mrows > 0 then
    out[#out + 1] = "<h2>Server metrics (vLLM /metrics)</h2>" .. html_table(with_machine_column(v, METRIC_COLUMNS), mrows, "server-metrics")
  end
  for _, t in ipairs(v.tables) do
    out[#out + 1] = "<h2>" .. esc(table_title(v, t)) .. "</h2>"
    if t.caption then out[#out + 1] = '<p class="note">' .. esc(t.caption) .. "</p>" end
    out[#out + 1] = html_table(t.columns, t.rows)
  end
  for _, c in ipairs(v.charts or {}) do
    out[#out + 1] = "<h2>" .. esc(c.name) .. "</h2>"
    if c.caption then out[#out + 1] = '<p class="note">' .. esc(c.caption) .. "</p>" end
    out[#out + 1] = svg.chart{ title = c.name, x_label = c.x_label or "", y_label = c.y_label or "", xlog = c.xlog, series = c.series }
  end
  local mrows = manifest.rows(v.manifest)
  if #mrows > 0 then
    out[#out + 1] = '<h2>Manifest</h2><p class="note">What it takes to run this again (results.json\'s manifest holds every field).</p>' ..
                    html_table({ "field", "value" }, mrows, "manifest")
  end
  if v.error then out[#out + 1] = '<h2>Error</h2><pre class="error">' .. esc(v.error) .. "</pre>" end
  out[#out + 1] = '<p class="note">Written by runara. ' .. esc(files_line(v)) .. "</p></main></body></html>\n"
  return table.concat(out, "\n")
end

return M
