-- report.md and report.html from a report's view (see report.lua). Pure functions: text in, text out.
local M = {}

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

local function f(v, digits)
  if not finite(v) then return "not measured" end
  if math.abs(v) >= 100 or digits == 0 then return string.format("%.0f", v) end
  return string.format("%." .. (digits or 1) .. "f", v)
end

local function gb(bytes) return finite(bytes) and string.format("%.1f GB", bytes / 1e9) or "not measured" end

local function esc(text)
  return (tostring(text):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }))
end

-- Markdown table cells may not hold line breaks or pipes.
-- Markdown table cells may not hold line breaks or pipes; < and > are escaped so that a name
-- from a script cannot become HTML in a Markdown viewer.
local function cell(text)
  return (tostring(text):gsub("[\r\n]+", " "):gsub("|", "\\|"):gsub("<", "&lt;"):gsub(">", "&gt;"))
end

local function machine_line(m)
  local parts = {}
  local function add(label, v) if v ~= nil and v ~= "" then parts[#parts + 1] = label .. tostring(v) end end
  add("", m.gpu and ((m.gpu_count and m.gpu_count > 1) and (m.gpu_count .. "× " .. m.gpu) or m.gpu))
  add("", m.gpu_vram_gb and (m.gpu_vram_gb .. " GB each"))
  add("size ", m.size)
  add("region ", m.region)
  add("driver ", m.driver_version)
  add("ROCm ", m.rocm_version)
  add("CUDA ", m.cuda_version)
  add("", m.framework)
  add("model ", m.model)
  add("", m.quantization)
  return table.concat(parts, " · ")
end

local function cost_line(m)
  if not finite(m.cost_usd) then return nil end
  return string.format("Machine cost: $%.4f%s", m.cost_usd, finite(m.hourly_usd) and string.format(" ($%.2f/h)", m.hourly_usd) or "")
end

-- Rows of §5.2's comparison: { metric, this run, reference, notes }.
local function comparison_rows(v)
  local b, ref = v.b, v.reference or {}
  local c32 = b.concurrent and b.concurrent["32_requests_tokens_per_second"]
  local function r(x, unit) return x and ("~" .. x .. (unit or "")) or "—" end
  return {
    { "Throughput (tok/s)", f(b.throughput and b.throughput.tokens_per_second), r(ref.throughput_tps), "single user" },
    { "TTFT (ms)", f(b.latency and b.latency.time_to_first_token_ms), r(ref.ttft_ms), "first token, median" },
    { "Batch throughput (tok/s)", f(c32), r(ref.concurrent_32_tps), "32 concurrent" },
    { "VRAM used", b.memory and b.memory.vram_used_gb and (f(b.memory.vram_used_gb) .. " GB") or "not measured", r(ref.vram_gb, " GB"), "" },
    { "Power draw", b.power and b.power.peak_w and (f(b.power.peak_w, 0) .. " W") or "not measured", r(ref.power_w, "W"), "peak" },
  }
end

local LOAD_COLUMNS = { "load", "concurrency", "ok / failed", "output tok/s", "TTFT p50 / p99 (ms)",
                       "TPOT p50 / p99 (ms)", "ITL p50 / p99 (ms)", "E2EL p50 (ms)", "energy (J)" }

local function load_row(name, c, m)
  return { name, f(c, 0), f(m.completed, 0) .. " / " .. f(m.failed, 0), f(m.output_throughput),
           f(m.median_ttft_ms) .. " / " .. f(m.p99_ttft_ms), f(m.median_tpot_ms, 2) .. " / " .. f(m.p99_tpot_ms, 2),
           f(m.median_itl_ms, 2) .. " / " .. f(m.p99_itl_ms, 2), f(m.median_e2el_ms), f(m.energy_j, 0) }
end

local function gpu_rows(g)
  local rows = {}
  for _, x in ipairs(g and g.summary and g.summary.gpus or {}) do
    rows[#rows + 1] = { f(x.index, 0), f(x.mean_power_w), f(x.max_power_w), f(x.energy_j, 0),
                        gb(x.max_vram_used_bytes), f(x.mean_gpu_util_pct), f(x.max_temp_hotspot_c or x.max_temp_edge_c, 0) }
  end
  return rows
end
local GPU_COLUMNS = { "GPU", "mean power (W)", "max power (W)", "energy (J)", "max VRAM", "mean util (%)", "max temp (°C)" }

local function banner(v)
  local out = {}
  if v.error then out[#out + 1] = "PARTIAL — the run failed before it finished: " .. v.error:match("^[^\n]*") end
  if v.simulated then
    out[#out + 1] = "SIMULATED — rehearsed with `runara --sim`: no GPU ran; every number below comes from the simulated machine's latency model and shims."
  end
  return out
end

local function md_table(columns, rows)
  local out = { "| " .. table.concat(columns, " | ") .. " |", "|" .. string.rep(" --- |", #columns) }
  for _, r in ipairs(rows) do
    local cells = {}
    for i = 1, #columns do cells[i] = cell(r[i] == nil and "" or r[i]) end
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return table.concat(out, "\n")
end

-- Where the loads were generated, and the round trip a local client would have added to TTFT.
local function where_line(v)
  local hosts, rtt = {}, nil
  local function note(m)
    if type(m.load_host) == "string" then hosts[m.load_host] = true end
    if type(m.controller_rtt_ms) == "number" and (not rtt or m.controller_rtt_ms < rtt) then rtt = m.controller_rtt_ms end
  end
  for _, l in ipairs(v.loads) do note(l.m) end
  for _, s in ipairs(v.sweeps) do for _, m in ipairs(s.rows) do note(m) end end
  local list = {}
  for h in pairs(hosts) do list[#list + 1] = h end
  table.sort(list)
  if #list == 0 then return nil end
  if #list == 1 and list[1] == "local" then return "Load generated on the machine runara ran on (through a tunnel to the server)." end
  local text = "Load generated on " .. table.concat(list, ", ") .. " by runara-agent, beside the server"
  if rtt then text = text .. string.format("; the round trip from runara to it, %.2f ms, is not in these latencies", rtt) end
  return text .. "."
end

function M.markdown(v)
  local out = { "# " .. cell(v.title), "" }
  for _, line in ipairs(banner(v)) do out[#out + 1] = "> **" .. cell(line) .. "**\n" end
  out[#out + 1] = cell(machine_line(v.meta))
  out[#out + 1] = ""
  local cost = cost_line(v.meta)
  if cost then out[#out + 1] = cost out[#out + 1] = "" end
  if v.reference or #v.loads > 0 or #v.sweeps > 0 then
    out[#out + 1] = "## Comparison"
    out[#out + 1] = ""
    out[#out + 1] = md_table({ "Metric", "This run" .. (v.simulated and " (simulated)" or ""), v.reference and v.reference.label or "Reference", "Notes" }, comparison_rows(v))
    if v.reference then out[#out + 1] = "\nReference: " .. cell(v.reference.source) end
  end
  if #v.loads > 0 then
    local rows = {}
    for _, l in ipairs(v.loads) do rows[#rows + 1] = load_row(l.name, l.concurrency, l.m) end
    out[#out + 1] = "\n## Loads\n"
    out[#out + 1] = md_table(LOAD_COLUMNS, rows)
  end
  local where = where_line(v)
  if where then out[#out + 1] = "\n" .. cell(where) end
  for _, s in ipairs(v.sweeps) do
    local rows = {}
    for _, m in ipairs(s.rows) do rows[#rows + 1] = load_row(m.label or "", m.max_concurrency, m) end
    out[#out + 1] = "\n## Sweep: " .. cell(s.name) .. "\n"
    out[#out + 1] = md_table(LOAD_COLUMNS, rows)
  end
  if v.gpu then
    out[#out + 1] = "\n## GPU\n"
    out[#out + 1] = md_table(GPU_COLUMNS, gpu_rows(v.gpu))
  end
  for _, t in ipairs(v.tables) do
    out[#out + 1] = "\n## " .. cell(t.name) .. "\n"
    if t.caption then out[#out + 1] = cell(t.caption) .. "\n" end
    out[#out + 1] = md_table(t.columns, t.rows)
  end
  if v.error then out[#out + 1] = "\n## Error\n\n```text\n" .. v.error:gsub("```", "'''") .. "\n```" end
  out[#out + 1] = "\nFiles: results.json (everything above, and each load's full metrics), a folder per load (results.json, requests.jsonl), run.log.\n"
  return table.concat(out, "\n")
end

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
.chart .legend text{font-size:12px;fill:#1d2330}.chart .mark line{stroke:#b0b7c3;stroke-dasharray:4 3}
.chart .mark text{font-size:10px;fill:#6b7484}.chart .empty{fill:#9aa3b2}
.note{color:#5d6677;font-size:13px}
pre.error{background:#fff;border:1px solid #f5c2bc;border-radius:6px;padding:10px;overflow-x:auto;font-size:12px;white-space:pre-wrap}
]]

local function html_table(columns, rows)
  local out = { "<table><thead><tr>" }
  for _, c in ipairs(columns) do out[#out + 1] = "<th>" .. esc(c) .. "</th>" end
  out[#out + 1] = "</tr></thead><tbody>"
  for _, r in ipairs(rows) do
    out[#out + 1] = "<tr>"
    for i = 1, #columns do out[#out + 1] = "<td>" .. esc(r[i] == nil and "" or r[i]) .. "</td>" end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</tbody></table>"
  return table.concat(out)
end

-- Points (concurrency, value) from the concurrent loads and the sweeps.
local function by_concurrency(v, field)
  local pts = {}
  for _, l in ipairs(v.loads) do
    if l.kind ~= "latency" and finite(l.concurrency) and finite(l.m[field]) then pts[#pts + 1] = { l.concurrency, l.m[field] } end
  end
  for _, s in ipairs(v.sweeps) do
    for _, m in ipairs(s.rows) do
      if finite(m.max_concurrency) and finite(m[field]) then pts[#pts + 1] = { m.max_concurrency, m[field] } end
    end
  end
  table.sort(pts, function(a, b) return a[1] < b[1] end)
  return pts
end

-- GPU series over time: one per GPU (up to 8) for `field`, scaled by `k`.
local function over_time(g, field, k, name)
  local series = {}
  for _, sample in ipairs(g and g.samples or {}) do
    for _, x in ipairs(sample.gpus or {}) do
      local i = (x.index or 0) + 1
      if i <= 8 and finite(x[field]) then
        series[i] = series[i] or { name = name .. " GPU " .. (i - 1), points = {}, dots = false }
        local p = series[i].points
        p[#p + 1] = { sample.t_s, x[field] * k }
      end
    end
  end
  local out = {}
  for i = 1, 8 do if series[i] then out[#out + 1] = series[i] end end
  return out
end

local function gpu_marks(g)
  local marks = {}
  for _, m in ipairs(g and g.marks or {}) do
    local label = tostring(m.label)
    if not label:match(" end$") then marks[#marks + 1] = { x = m.t_s, label = (label:gsub(" start$", "")) } end
  end
  return marks
end

local function cards(v)
  local b = v.b
  local items = {
    { "single-stream output", b.throughput and b.throughput.tokens_per_second, "tok/s", v.reference and v.reference.throughput_tps },
    { "time to first token", b.latency and b.latency.time_to_first_token_ms, "ms", v.reference and v.reference.ttft_ms },
    { "32 concurrent output", b.concurrent and b.concurrent["32_requests_tokens_per_second"], "tok/s", v.reference and v.reference.concurrent_32_tps },
    { "peak GPU power", b.power and b.power.peak_w, "W", v.reference and v.reference.power_w },
    { "peak VRAM", b.memory and b.memory.vram_peak_gb, "GB", v.reference and v.reference.vram_gb },
  }
  local out = { '<div class="cards">' }
  for _, it in ipairs(items) do
    if finite(it[2]) then
      out[#out + 1] = string.format('<div class="card"><div class="v">%s <small>%s</small></div><div class="l">%s</div>%s</div>',
        esc(f(it[2])), esc(it[3]), esc(it[1]), it[4] and ('<div class="r">' .. esc(v.reference.label) .. ": ~" .. esc(it[4]) .. "</div>") or "")
    end
  end
  out[#out + 1] = "</div>"
  return table.concat(out)
end

function M.html(v, svg)
  local out = { '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
                "<title>" .. esc(v.title) .. "</title><style>" .. CSS .. "</style></head><body><main>",
                "<h1>" .. esc(v.title) .. "</h1>" }
  if v.error then out[#out + 1] = '<div class="banner partial" id="partial">' .. esc(banner(v)[1]) .. "</div>" end
  if v.simulated then out[#out + 1] = '<div class="banner simulated" id="simulated">' .. esc(banner(v)[v.error and 2 or 1]) .. "</div>" end
  out[#out + 1] = '<p class="machine">' .. esc(machine_line(v.meta)) .. "</p>"
  local cost = cost_line(v.meta)
  if cost then out[#out + 1] = '<p class="cost">' .. esc(cost) .. "</p>" end
  out[#out + 1] = cards(v)
  local serving = v.reference ~= nil or #v.loads > 0 or #v.sweeps > 0
  if serving then
  out[#out + 1] = "<h2>Comparison</h2>"
  out[#out + 1] = html_table({ "Metric", "This run" .. (v.simulated and " (simulated)" or ""), v.reference and v.reference.label or "Reference", "Notes" }, comparison_rows(v))
  if v.reference then out[#out + 1] = '<p class="note">Reference: ' .. esc(v.reference.source) .. "</p>" end
  out[#out + 1] = "<h2>Throughput and latency against concurrency</h2>"
  local sweep = #v.sweeps > 0
  out[#out + 1] = svg.chart{ title = "Throughput vs concurrency", x_label = "concurrent requests", y_label = "tokens/s", xlog = sweep,
    series = { { name = "output tok/s", points = by_concurrency(v, "output_throughput") },
               { name = "total tok/s", points = by_concurrency(v, "total_token_throughput") } } }
  out[#out + 1] = svg.chart{ title = "TTFT and TPOT vs concurrency", x_label = "concurrent requests", y_label = "milliseconds", xlog = sweep,
    series = { { name = "TTFT p50", points = by_concurrency(v, "median_ttft_ms") }, { name = "TTFT p99", points = by_concurrency(v, "p99_ttft_ms") },
               { name = "TPOT p50", points = by_concurrency(v, "median_tpot_ms") }, { name = "TPOT p99", points = by_concurrency(v, "p99_tpot_ms") } } }
  end
  if v.gpu or serving then
    out[#out + 1] = "<h2>GPU over time</h2>"
    local marks = gpu_marks(v.gpu)
    out[#out + 1] = svg.chart{ title = "GPU power", x_label = "seconds since sampling started", y_label = "watts",
                               series = over_time(v.gpu, "power_w", 1, "power"), marks = marks }
    out[#out + 1] = svg.chart{ title = "VRAM used", x_label = "seconds since sampling started", y_label = "GB",
                               series = over_time(v.gpu, "vram_used_bytes", 1e-9, "VRAM"), marks = marks }
  end
  if #v.loads > 0 then
    local rows = {}
    for _, l in ipairs(v.loads) do rows[#rows + 1] = load_row(l.name, l.concurrency, l.m) end
    out[#out + 1] = "<h2>Loads</h2>" .. html_table(LOAD_COLUMNS, rows)
  end
  local where = where_line(v)
  if where then out[#out + 1] = '<p class="note">' .. esc(where) .. "</p>" end
  for _, s in ipairs(v.sweeps) do
    local rows = {}
    for _, m in ipairs(s.rows) do rows[#rows + 1] = load_row(m.label or "", m.max_concurrency, m) end
    out[#out + 1] = "<h2>Sweep: " .. esc(s.name) .. "</h2>" .. html_table(LOAD_COLUMNS, rows)
  end
  if v.gpu then out[#out + 1] = "<h2>GPU summary</h2>" .. html_table(GPU_COLUMNS, gpu_rows(v.gpu)) end
  for _, t in ipairs(v.tables) do
    out[#out + 1] = "<h2>" .. esc(t.name) .. "</h2>"
    if t.caption then out[#out + 1] = '<p class="note">' .. esc(t.caption) .. "</p>" end
    out[#out + 1] = html_table(t.columns, t.rows)
  end
  if v.error then out[#out + 1] = '<h2>Error</h2><pre class="error">' .. esc(v.error) .. "</pre>" end
  out[#out + 1] = '<p class="note">Written by runara. results.json holds every figure above and each load\'s full metrics.</p></main></body></html>\n'
  return table.concat(out, "\n")
end

return M
