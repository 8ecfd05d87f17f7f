-- report.md and report.html from a report's view (see report.lua's write). Pure functions: text
-- in, text out. A section appears only when the view has its data; with several machines every
-- table has a column (or row) per machine and every chart a series per machine.
local M = {}

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

local function f(v, digits)
  if not finite(v) then return "not measured" end
  if math.abs(v) >= 100 or digits == 0 then return string.format("%.0f", v) end
  return string.format("%." .. (digits or 1) .. "f", v)
end

-- A value, or "—" when missing (in tables where the row exists because something else was measured).
local function fv(v, digits) return finite(v) and f(v, digits) or "—" end

local function gb(bytes) return finite(bytes) and string.format("%.1f GB", bytes / 1e9) or "—" end

local function esc(text)
  return (tostring(text):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }))
end

-- Text from a script or a machine, made inert in Markdown: no line breaks (table cells), and
-- every character that could start a link, an image, HTML, a code span or a cell is escaped
-- (`[x](javascript:…)` stays text; so does `![x](http://…)`, `<img …>` and `&lt;`).
local MD = { ["\\"] = "\\\\", ["`"] = "\\`", ["["] = "\\[", ["]"] = "\\]", ["|"] = "\\|", ["<"] = "&lt;", [">"] = "&gt;", ["&"] = "&amp;" }
local function cell(text)
  return (tostring(text):gsub("[\r\n]+", " "):gsub("[\\`%[%]|<>&]", MD))
end
M.md_escape = cell

---------------------------------------------------------------------------------------------------
-- Pieces shared by both formats.

local function machine_line(m)
  local parts = {}
  local function add(label, v) if v ~= nil and v ~= "" then parts[#parts + 1] = label .. tostring(v) end end
  add("", m.gpu and ((finite(m.gpu_count) and m.gpu_count > 1) and (m.gpu_count .. "× " .. tostring(m.gpu)) or m.gpu))
  add("", m.gpu_vram_gb and (tostring(m.gpu_vram_gb) .. " GB each"))
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

local function multi(v) return v.machines and #v.machines > 0 end

-- An error's first line, at most 160 characters (the whole text is in the Error section).
local function short(text)
  local line = tostring(text):match("^[^\n]*")
  return #line > 160 and (line:sub(1, 157) .. "...") or line
end

-- The machines' table (a comparison): what each is, what it cost, whether it finished.
local MACHINE_COLUMNS = { "machine", "GPU", "size", "region", "driver", "ROCm / CUDA", "server", "price", "cost", "status" }
local function machine_rows(v)
  local rows = {}
  for _, m in ipairs(v.machines) do
    local x = m.meta or {}
    local gpu = x.gpu and ((finite(x.gpu_count) and x.gpu_count > 1) and (x.gpu_count .. "× " .. tostring(x.gpu)) or tostring(x.gpu)) or "—"
    local stack = x.rocm_version and ("ROCm " .. tostring(x.rocm_version)) or x.cuda_version and ("CUDA " .. tostring(x.cuda_version)) or "—"
    rows[#rows + 1] = { m.label, gpu, x.size or "—", x.region or "—", x.driver_version or "—", stack, x.framework or "—",
      finite(x.hourly_usd) and string.format("$%.2f/h", x.hourly_usd) or "—",
      finite(x.cost_usd) and string.format("$%.4f", x.cost_usd) or "—",
      m.error and ("failed: " .. short(m.error)) or "complete" }
  end
  return rows
end

-- Rows of the comparison of several machines: { metric, value per machine..., [ratio], notes }.
local function compare_table(v)
  local cmp = v.compare
  local cols = { "Metric" }
  for _, m in ipairs(v.machines) do cols[#cols + 1] = m.label .. (m.error and " (failed)" or "") .. (v.simulated and " (simulated)" or "") end
  if cmp.ratio then cols[#cols + 1] = cmp.ratio end
  cols[#cols + 1] = "Notes"
  local rows = {}
  local need = v.min_samples or { p99 = 100, median = 10 }
  for _, r in ipairs(cmp.rows) do
    local row, few = { r.metric }, {}
    for _, m in ipairs(v.machines) do
      local x = r.values[m.key]
      local n = r.samples and r.samples[m.key]
      local text = x and f(x, r.digits or (math.abs(x) < 10 and 2 or 1)) or (m.error and "failed" or "—")
      local p99 = r.metric:find("p99", 1, true) ~= nil
      if x and n and n < (p99 and need.p99 or need.median) then
        text = text .. "†"
        few[#few + 1] = string.format("%s: %s of %d", m.label, p99 and "p99" or "median", n)
      end
      row[#row + 1] = text
    end
    if cmp.ratio then
      local x, y = r.values[v.machines[1].key], r.values[v.machines[2].key]
      row[#row + 1] = (finite(x) and finite(y) and y ~= 0) and string.format("%.2f", x / y) or "—"
    end
    local notes = {}
    if r.better then notes[#notes + 1] = r.better .. " is better" end
    if #few > 0 then notes[#notes + 1] = table.concat(few, ", ") end
    row[#row + 1] = table.concat(notes, "; ")
    rows[#rows + 1] = row
  end
  return cols, rows
end

-- Rows of the comparison with a reference, only for what this run measured: { metric, this run, reference, notes }.
local function reference_rows(v)
  local b, ref = v.b, v.reference
  local c32 = b.concurrent and b.concurrent["32_requests_tokens_per_second"]
  local function r(x, unit) return x and ("~" .. x .. (unit or "")) or "—" end
  local all = {
    { "Throughput (tok/s)", b.throughput and b.throughput.tokens_per_second, "", r(ref.throughput_tps), "single user" },
    { "TTFT (ms)", b.latency and b.latency.time_to_first_token_ms, "", r(ref.ttft_ms), "first token, median" },
    { "Batch throughput (tok/s)", c32, "", r(ref.concurrent_32_tps), "32 concurrent" },
    { "VRAM used", b.memory and b.memory.vram_used_gb, " GB", r(ref.vram_gb, " GB"), "" },
    { "Power draw", b.power and b.power.peak_w, " W", r(ref.power_w, " W"), "peak" },
  }
  local rows = {}
  for _, x in ipairs(all) do
    if finite(x[2]) then rows[#rows + 1] = { x[1], f(x[2], x[3] == " W" and 0 or nil) .. x[3], x[4], x[5] } end
  end
  return rows
end

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

local function few_note(v, few)
  if #few == 0 then return nil end
  local need = v.min_samples or { p99 = 100, median = 10 }
  return string.format("† rests on too few samples to mean much: a p99 needs at least %d (fewer leave less than one sample above it), " ..
    "a median at least %d. Requests measured: %s.", need.p99, need.median, table.concat(few, ", "))
end

local function gpu_rows(g, label)
  local rows = {}
  for _, x in ipairs(g and g.summary and g.summary.gpus or {}) do
    local row = { f(x.index, 0), fv(x.mean_power_w), fv(x.max_power_w), fv(x.energy_j, 0),
                  gb(x.max_vram_used_bytes), fv(x.mean_gpu_util_pct), fv(x.max_temp_hotspot_c or x.max_temp_edge_c, 0) }
    if label then table.insert(row, 1, label) end
    rows[#rows + 1] = row
  end
  return rows
end
local GPU_COLUMNS = { "GPU", "mean power (W)", "max power (W)", "energy (J)", "max VRAM", "mean util (%)", "max temp (°C)" }

-- What the GPUs did in each phase (the marks of rep:phase and of each load): a load's own phase,
-- not its short lead-in nor the gap after it.
local function phase_rows(g, label)
  local rows = {}
  for _, p in ipairs(g and g.phases or {}) do
    local name = tostring(p.label or "")
    local dur = finite(p.end_s) and finite(p.start_s) and p.end_s - p.start_s or nil
    if not name:match(" end$") and dur and dur >= 0.5 then
      local maxw, util, n = nil, nil, 0
      for _, x in ipairs(p.gpus or {}) do
        if finite(x.max_power_w) then maxw = math.max(maxw or 0, x.max_power_w) end
        if finite(x.mean_gpu_util_pct) then util = math.max(util or 0, x.mean_gpu_util_pct) end
        if finite(x.samples) then n = math.max(n, x.samples) end
      end
      local row = { (name:gsub(" start$", "")), f(dur), f(n, 0), fv(p.mean_power_w), fv(maxw), fv(p.energy_j, 0), gb(p.peak_vram_bytes), fv(util) }
      if label then table.insert(row, 1, label) end
      rows[#rows + 1] = row
    end
  end
  return rows
end
local PHASE_COLUMNS = { "phase", "seconds", "samples", "mean power (W, all GPUs)", "max power (W)", "energy (J)", "peak VRAM", "mean util (%)" }

-- GPU results by machine: { {label = (nil with one machine), gpu = results}, ... }.
local function gpu_sets(v)
  local out = {}
  if multi(v) then
    for _, m in ipairs(v.machines) do if type(m.gpu) == "table" then out[#out + 1] = { label = m.label, gpu = m.gpu } end end
  end
  if type(v.gpu) == "table" then table.insert(out, 1, { label = multi(v) and "run" or nil, gpu = v.gpu }) end
  return out
end

-- Server metrics (vLLM's /metrics) by machine: { {label =, res = (sampler results or nil), summary =}, ... }.
local function metric_sets(v)
  local out = {}
  local own = multi(v) and "run" or nil
  if type(v.server_metrics) == "table" then out[#out + 1] = { label = own, res = v.server_metrics, summary = v.server_metrics.summary } end
  if type(v.vllm_summary) == "table" then out[#out + 1] = { label = own, summary = v.vllm_summary } end
  for _, m in ipairs(multi(v) and v.machines or {}) do
    if type(m.server_metrics) == "table" then out[#out + 1] = { label = m.label, res = m.server_metrics, summary = m.server_metrics.summary } end
  end
  return out
end

local METRIC_COLUMNS = { "metric", "mean", "max", "last", "counted (delta)" }
local function metric_rows(set)
  local rows, names = {}, {}
  local metrics = type(set.summary) == "table" and set.summary.metrics or {}
  if type(metrics) ~= "table" then return rows end
  for name in pairs(metrics) do names[#names + 1] = tostring(name) end
  table.sort(names)
  for i, name in ipairs(names) do
    if i > 40 then break end
    local x = metrics[name]
    if type(x) == "table" then
      local counter = name:match("_total$") ~= nil or name:match("_count$") ~= nil or name:match("_sum$") ~= nil
      local row = { name, counter and "—" or fv(x.mean, 2), counter and "—" or fv(x.max, 2), fv(x.last, 2), counter and fv(x.delta, 0) or "—" }
      if set.label then table.insert(row, 1, set.label) end
      rows[#rows + 1] = row
    end
  end
  return rows
end

local function with_machine_column(v, columns)
  if not multi(v) then return columns end
  local out = { "machine" }
  for _, c in ipairs(columns) do out[#out + 1] = c end
  return out
end

local function banner(v)
  local out = {}
  if v.error then
    local first = v.error:match("^[^\n]*")
    if multi(v) then
      local ok = {}
      for _, m in ipairs(v.machines) do if not m.error then ok[#ok + 1] = m.label end end
      out[#out + 1] = "PARTIAL — " .. first .. (#ok > 0 and #ok < #v.machines and (" (" .. table.concat(ok, ", ") .. ": measured, below)") or "")
    else
      out[#out + 1] = "PARTIAL — the run failed before it finished: " .. first
    end
  end
  if v.simulated then
    out[#out + 1] = "SIMULATED — rehearsed with runara --sim: no GPU ran; every number below comes from the simulated machine's latency model and shims."
  end
  return out
end

-- Where the loads were generated, and the round trip a local client would have added to TTFT.
local function where_line(v)
  local hosts, rtt = {}, nil
  local function note(m)
    if type(m.load_host) == "string" then hosts[m.load_host] = true end
    if finite(m.controller_rtt_ms) and (not rtt or m.controller_rtt_ms < rtt) then rtt = m.controller_rtt_ms end
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

-- The files the reports can vouch for: results.json, run.log, the loads' folders, what the scenario listed.
local function files_line(v)
  local parts = { "results.json (every figure above" .. ((#v.loads > 0 or #v.sweeps > 0) and ", and each load's full metrics)" or ")") }
  local folders = {}
  for _, l in ipairs(v.loads) do if type(l.m.label) == "string" then folders[#folders + 1] = l.m.label end end
  for _, s in ipairs(v.sweeps) do for _, m in ipairs(s.rows) do if type(m.label) == "string" then folders[#folders + 1] = m.label end end end
  if #folders > 0 then
    local shown = {}
    for i = 1, math.min(#folders, 12) do shown[i] = folders[i] .. "/" end
    parts[#parts + 1] = "a folder per load with its results.json and requests.jsonl (" .. table.concat(shown, ", ") ..
      (#folders > 12 and string.format(" and %d more", #folders - 12) or "") .. ")"
  end
  for _, file in ipairs(v.files or {}) do parts[#parts + 1] = file.path .. (file.what and (" (" .. file.what .. ")") or "") end
  parts[#parts + 1] = "run.log (the run's log)"
  return "Files: " .. table.concat(parts, "; ") .. "."
end

---------------------------------------------------------------------------------------------------
-- report.md

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

local function sweep_title(v, s)
  local label
  for _, m in ipairs(v.machines or {}) do if m.key == s.machine then label = m.label end end
  return "Sweep: " .. s.name .. (label and (" (" .. label .. ")") or "")
end

local function table_title(v, t)
  for _, m in ipairs(v.machines or {}) do if m.key == t.machine then return m.label .. ": " .. t.name end end
  return t.name
end

-- The line under the title: the machine, or with several (each in its own table) only what they share.
local function top_line(v)
  if multi(v) then return machine_line({ model = v.meta.model, quantization = v.meta.quantization }) end
  return machine_line(v.meta)
end

function M.markdown(v)
  local out = { "# " .. cell(v.title), "" }
  for _, line in ipairs(banner(v)) do out[#out + 1] = "> **" .. cell(line) .. "**\n" end
  local line = top_line(v)
  if line ~= "" then out[#out + 1] = cell(line) out[#out + 1] = "" end
  if v.meta.ran_on then out[#out + 1] = "Ran on: " .. cell(v.meta.ran_on) out[#out + 1] = "" end
  local cost = cost_line(v.meta)
  if cost then out[#out + 1] = cost .. (multi(v) and " in all (each machine's below)" or "") out[#out + 1] = "" end
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
    end
  end
  if #v.loads > 0 then
    local cols, rows, few = loads_table(v, v.loads)
    out[#out + 1] = "\n## Loads\n"
    out[#out + 1] = md_table(cols, rows)
    local note = few_note(v, few)
    if note then out[#out + 1] = "\n" .. cell(note) end
  end
  local where = where_line(v)
  if where then out[#out + 1] = "\n" .. cell(where) end
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
    if t.caption then out[#out + 1] = cell(t.caption) .. "\n" end
    out[#out + 1] = md_table(t.columns, t.rows)
  end
  if v.error then out[#out + 1] = "\n## Error\n\n```text\n" .. v.error:gsub("```", "'''") .. "\n```" end
  out[#out + 1] = "\n" .. cell(files_line(v)) .. "\n"
  return table.concat(out, "\n")
end

---------------------------------------------------------------------------------------------------
-- report.html

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
-- machine with more GPUs, their total (power) or largest (VRAM) per sample.
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
        local acc
        for _, x in ipairs(sample.gpus or {}) do
          if finite(x[field]) then acc = combine == "sum" and (acc or 0) + x[field] or math.max(acc or -math.huge, x[field]) end
        end
        if acc and finite(sample.t_s) then pts[#pts + 1] = { sample.t_s, acc * k } end
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
          if i >= 1 and i <= 8 and finite(x[field]) then
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

-- A server metric's value in one sample (names with or without the "vllm:" prefix).
local function metric_value(values, names)
  for _, n in ipairs(names) do
    local x = values[n] or values["vllm:" .. n]
    if finite(x) then return x end
  end
end

local function metric_series(v, names, label, k)
  local series = {}
  for si, set in ipairs(metric_sets(v)) do
    if set.res and type(set.res.samples) == "table" then
      local pts = {}
      for _, s in ipairs(set.res.samples) do
        local x = type(s.values) == "table" and metric_value(s.values, names)
        if x and finite(s.t_s) then pts[#pts + 1] = { s.t_s, x * (k or 1) } end
      end
      if #pts > 0 then
        series[#series + 1] = { name = (set.label and (set.label .. " ") or "") .. label, points = pts, dots = false,
                                color = multi(v) and MACHINE_COLORS[(si - 1) % #MACHINE_COLORS + 1] or nil }
      end
    end
  end
  return series
end

local function cards(v)
  local b, ref = v.b, v.reference
  local items = {
    { "single-stream output", b.throughput and b.throughput.tokens_per_second, "tok/s", ref and ref.throughput_tps },
    { "time to first token", b.latency and b.latency.time_to_first_token_ms, "ms", ref and ref.ttft_ms },
    { "32 concurrent output", b.concurrent and b.concurrent["32_requests_tokens_per_second"], "tok/s", ref and ref.concurrent_32_tps },
    { "peak GPU power", b.power and b.power.peak_w, "W", ref and ref.power_w },
    { "peak VRAM", b.memory and b.memory.vram_peak_gb, "GB", ref and ref.vram_gb },
  }
  local out = {}
  for _, it in ipairs(items) do
    if finite(it[2]) then
      out[#out + 1] = string.format('<div class="card"><div class="v">%s <small>%s</small></div><div class="l">%s</div>%s</div>',
        esc(f(it[2])), esc(it[3]), esc(it[1]), it[4] and ('<div class="r">' .. esc(ref.label) .. ": ~" .. esc(it[4]) .. "</div>") or "")
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
  local line = top_line(v)
  if line ~= "" then out[#out + 1] = '<p class="machine">' .. esc(line) .. "</p>" end
  if v.meta.ran_on then out[#out + 1] = '<p class="machine" id="ran-on">Ran on: ' .. esc(v.meta.ran_on) .. "</p>" end
  local cost = cost_line(v.meta)
  if cost then out[#out + 1] = '<p class="cost">' .. esc(cost .. (multi(v) and " in all (each machine's below)" or "")) .. "</p>" end
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
    end
  end
  -- Charts against concurrency, where loads at several concurrencies (or a sweep) were measured.
  local sweep = #v.sweeps > 0
  local need = v.min_samples or { p99 = 100, median = 10 }
  local tput = concurrency_series(v, { { name = "output tok/s", field = "output_throughput" },
                                       { name = "total tok/s", field = "total_token_throughput", dash = true } })
  if #tput > 0 then
    out[#out + 1] = "<h2>Throughput and latency against concurrency</h2>"
    out[#out + 1] = svg.chart{ title = "Throughput vs concurrency", x_label = "concurrent requests", y_label = "tokens/s", xlog = sweep, series = tput }
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
  local vram = over_time(v, "vram_used_bytes", 1e-9, "VRAM", "max")
  if #power > 0 or #vram > 0 then
    out[#out + 1] = "<h2>GPU over time</h2>"
    local marks = gpu_marks(v)
    local x_label = multi(v) and "seconds since each machine's sampling started" or "seconds since sampling started"
    if #power > 0 then out[#out + 1] = svg.chart{ title = "GPU power", x_label = x_label, y_label = "watts", series = power, marks = marks } end
    if #vram > 0 then out[#out + 1] = svg.chart{ title = "VRAM used", x_label = x_label, y_label = "GB", series = vram, marks = marks } end
  end
  local running = metric_series(v, { "num_requests_running" }, "running", 1)
  for _, s in ipairs(metric_series(v, { "num_requests_waiting" }, "waiting", 1)) do s.dash = true running[#running + 1] = s end
  local kv = metric_series(v, { "kv_cache_usage_perc", "gpu_cache_usage_perc" }, "KV cache used", 100)
  if #running > 0 or #kv > 0 then
    out[#out + 1] = "<h2>Server (vLLM /metrics) over time</h2>"
    if #running > 0 then out[#out + 1] = svg.chart{ title = "Requests running and waiting", x_label = "seconds since scraping started", y_label = "requests", series = running } end
    if #kv > 0 then out[#out + 1] = svg.chart{ title = "KV cache used", x_label = "seconds since scraping started", y_label = "% of the KV cache", series = kv } end
  end
  if #v.loads > 0 then
    local cols, rows, few = loads_table(v, v.loads)
    out[#out + 1] = "<h2>Loads</h2>" .. html_table(cols, rows, "loads")
    local note = few_note(v, few)
    if note then out[#out + 1] = '<p class="note">' .. esc(note) .. "</p>" end
  end
  local where = where_line(v)
  if where then out[#out + 1] = '<p class="note">' .. esc(where) .. "</p>" end
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
  if v.error then out[#out + 1] = '<h2>Error</h2><pre class="error">' .. esc(v.error) .. "</pre>" end
  out[#out + 1] = '<p class="note">Written by runara. ' .. esc(files_line(v)) .. "</p></main></body></html>\n"
  return table.concat(out, "\n")
end

return M
