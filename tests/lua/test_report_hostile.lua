-- runara.report against what a hostile machine, server or script can hand it: GPU readings of
-- -1e300 W, NaN, ±inf and absurd counts must still give report.md and report.html, written in
-- bounded time, with every number printed sanely (no 300-digit figures, no nan or inf); names
-- with links, remote images, HTML, escape sequences and line breaks must come out inert in both.
local t = require("t")
local report = require("runara.report")
local fx = require("fixtures.report_results")

local HUGE = { -1e300, 1e300, 0 / 0, math.huge, -math.huge, 1.7e308, -1.7e308, 2 ^ 63, 1e16 }

local quick = t.quick

-- A report whose every number source holds x: GPU samples (power, VRAM, time), the sampler's
-- summary and phases, phase marks, server metrics, loads and a sweep, metadata and cost.
local function poisoned(x, machines)
  local rep = report.new{ title = "hostile figures", reference = not machines and "llama70b_fp8" or nil }
  local function fill(view)
    view:metadata{ gpu = "AMD Instinct MI300X", gpu_count = x, gpu_vram_gb = x, cost_usd = x, hourly_usd = x }
    view:add_load("throughput", fx.load("throughput", 1, 2, { output_throughput = x, median_ttft_ms = x, p99_ttft_ms = x,
      completed = x, failed = x, count_ttft = x, energy_j = x, controller_rtt_ms = x }), { kind = "throughput" })
    view:add_load("latency", fx.load("latency", 1, 5, { median_ttft_ms = x }), { kind = "latency" })
    view:add_load("c32", fx.load("c32", 32, 64, { output_throughput = x }), { kind = "concurrent", concurrency = x })
    view:add_load("c10", fx.load("c10", 10, 20), { kind = "concurrent", concurrency = 10 })
    view:add_sweep("sweep", { fx.load("s1", x, 2, { output_throughput = x }), fx.load("s4", 4, 2, { p99_ttft_ms = x }) }, { files = false })
    local g = fx.gpu({ gpus = 2, seconds = 12, max_power_w = x,
      watts = function(tt) return tt == 3 and x or 500 end, vram = function(tt) return tt == 4 and x or 1e9 end,
      marks = { { t_s = x, label = "m" }, { t_s = 2, label = "throughput start" }, { t_s = 8, label = "throughput end" } } })
    g.samples[6].t_s = x
    g.summary.peak_vram_bytes, g.summary.mean_power_w, g.summary.energy_j = x, x, x
    g.phases[2].end_s, g.phases[2].mean_power_w = x, x
    view:add_gpu(g)
    local sm = fx.server_metrics(6)
    sm.samples[2].values["vllm:num_requests_running"] = x
    sm.samples[3].t_s = x
    sm.summary.metrics["vllm:num_requests_running"].max = x
    sm.summary.metrics["vllm:generation_tokens_total"].delta = x
    view:add_server_metrics(sm)
  end
  if machines then
    fill(rep:machine("mi300x", { label = "MI300X" }))
    fill(rep:machine("h100", { label = "H100", gpu = "NVIDIA H100" }))
  else
    fill(rep)
  end
  return rep
end

-- Numbers printed sanely: no nan or inf, no run of digits longer than a 64-bit count's.
local function sane_numbers(text, what)
  t.no_match(text, "%f[%w]%-?nan%f[%W]", what .. ": nan printed")
  t.no_match(text, "%f[%w]%-?inf%f[%W]", what .. ": inf printed")
  t.no_match(text, "%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d", what .. ": a number of more than 20 digits")
end

for _, machines in ipairs({ false, true }) do
  t.test("GPU power of -1e300, 1e300, NaN, ±inf, huge counts: both reports written, quickly, numbers sane" ..
         (machines and " (two machines)" or ""), function()
    for _, x in ipairs(HUGE) do
      local what = tostring(x)
      local rep = poisoned(x, machines)
      local paths = quick(1, function() return rep:write() end)
      t.truthy(paths.html and paths.md, what .. ": paths")
      local r = quick(1, function() return rep:render() end)
      t.match(r.html, "^<!DOCTYPE html>", what)
      t.match(r.html, "</html>\n$", what .. ": the whole page")
      t.no_match(r.html, "could not be rendered", what)
      t.no_match(r.md, "could not be rendered", what)
      t.match(r.html, "<svg", what .. ": charts drawn")
      sane_numbers(r.md, what .. " report.md")
      sane_numbers(r.html, what .. " report.html")
      sane_numbers(rep:summary(paths), what .. " summary")
      for chart in r.html:gmatch("<svg.-</svg>") do
        for attr, value in chart:gmatch('(%a+)="([^"]*)"') do
          if attr == "cx" or attr == "cy" or attr == "points" or attr == "y1" or attr == "x1" then
            for n in value:gmatch("[-%d%.e+]+") do
              local v = tonumber(n)
              t.truthy(v and v > -1e6 and v < 1e6, what .. ": " .. attr .. "=" .. value .. " is on the page")
            end
          end
        end
      end
    end
  end)
end

t.test("a sample left out of a chart is counted in its note", function()
  local rep = poisoned(-1e300)
  local power = rep:render().html:match('<svg[^>]-aria%-label="GPU power".-</svg>')
  t.truthy(power, "the power chart")
  -- both GPUs' reading at t = 3, and both of the sample whose time is the value
  t.match(power, "4 point%(s%) not finite or beyond ±1e15 left out")
  local nan = poisoned(0 / 0):render().html
  t.match(nan:match('<svg[^>]-aria%-label="GPU power".-</svg>'), "4 point%(s%) not finite or beyond ±1e15 left out",
          "NaN power and a NaN time")
  t.match(nan:match('<svg[^>]-aria%-label="Requests running and waiting".-</svg>'), "point%(s%) not finite")
  -- 8 GPUs: a total with a NaN reading is left out, not understated
  local r8 = report.new{ title = "x" }
  r8:add_gpu(fx.gpu({ gpus = 8, seconds = 10, watts = function(tt, i) return (tt == 2 and i == 5) and 0 / 0 or 500 end }))
  local chart = r8:render().html:match('<svg[^>]-aria%-label="GPU power".-</svg>')
  t.match(chart, "1 point%(s%) not finite")
  t.no_match(chart, 'data%-y="3500"', "no total without GPU 5")
end)

t.test("absurd figures in tables: exponent form, not hundreds of digits", function()
  local r = poisoned(1e300):render()
  t.match(r.md, "1e%+300")
  t.match(r.md, "Machine cost: %$1e%+300 %(%$1e%+300/h%)")
  t.match(r.html, "1e%+300")
  local c = poisoned(1e300, true):render()
  t.match(c.md, "throughput at 1e%+300 concurrent", "a concurrency of 1e300 named as such (\"%d\" printed -9223372036854775808)")
  t.no_match(c.md, "9223372036854775808")
  local nan = poisoned(0 / 0):render()
  t.no_match(nan.md, "GB each", "a VRAM size of NaN is left out of the machine line")
end)

t.test("400,000 GPU readings with garbage among them: drawn in bounded time", function()
  local samples = {}
  for i = 1, 100000 do
    local w = i % 1000 == 0 and -1e300 or i % 1001 == 0 and 0 / 0 or 300 + i % 7
    samples[i] = { t_s = i * 0.01, gpus = { { index = 0, power_w = w, vram_used_bytes = 1e9 }, { index = 1, power_w = 500, vram_used_bytes = 2e9 },
                                            { index = 2, power_w = 500, vram_used_bytes = 2e9 }, { index = 3, power_w = w, vram_used_bytes = 2e9 } } }
  end
  local rep = report.new{ title = "many" }
  rep:add_gpu({ samples = samples, summary = { gpus = {} } })
  local html = quick(20, function() return rep:render().html end)
  local power = html:match('<svg[^>]-aria%-label="GPU power".-</svg>')
  t.match(power, "%d+ point%(s%) not finite or beyond ±1e15 left out")
  local n = 0
  for _ in power:gmatch("<circle") do n = n + 1 end
  t.truthy(n <= 4 * 2000, n .. " points drawn")
end)

-- What a model id, a GPU name, a vLLM version, an error and a script's names can hold.
local EVIL = {
  link = "[x](javascript:alert(1))",
  image = "![](http://evil.example/x.png)",
  html = "<img src=x onerror=alert(1)>",
  term = "a\27]0;title\7\27[2J\r\nforged line \194\155" .. "31m",
  fence = "~~~ the rest of the report is code",
  heading = "# not a heading",
  ref = "[id]: http://evil.example/",
  auto = "<http://evil.example/>",
  entity = "&lt;img src=x&gt;",
  cell = "a | b\n| --- |",
}

local function evil_report()
  local rep = report.new{ title = EVIL.link .. " " .. EVIL.image, reference = "llama70b_fp8" }
  rep:metadata{ gpu = EVIL.fence, model = EVIL.link, framework = "vLLM " .. EVIL.image, driver_version = EVIL.html,
                quantization = EVIL.term, region = EVIL.ref, ran_on = EVIL.auto .. " " .. EVIL.entity }
  rep:add_load(EVIL.image, fx.load(EVIL.html, 1, 2, { load_host = EVIL.link }), { kind = "throughput" })
  rep:add_load(EVIL.cell, fx.load("c", 32, 64), { kind = "concurrent", concurrency = 32 })
  rep:add_sweep(EVIL.heading, { fx.load(EVIL.term, 1, 2), fx.load("s4", 4, 2) }, { files = false })
  local g = fx.gpu({ gpus = 1, seconds = 10, marks = { { t_s = 1, label = EVIL.html }, { t_s = 5, label = EVIL.link .. " start" } } })
  g.phases[1].label = EVIL.image
  rep:add_gpu(g)
  local sm = fx.server_metrics(5)
  sm.summary.metrics[EVIL.link] = { first = 1, last = 2, delta = 1, mean = 1.5, max = 2, samples = 5 }
  rep:add_server_metrics(sm)
  rep:add_table(EVIL.fence, { columns = { EVIL.cell, EVIL.html }, rows = { { EVIL.image, EVIL.term } }, caption = EVIL.heading })
  rep:add_file(EVIL.link, EVIL.image)
  rep:fail(EVIL.term .. "\n```\n" .. EVIL.html .. "\n~~~")
  return rep
end

t.test("report.md: links, images, HTML, escape sequences and block syntax from machines stay text", function()
  local rep = evil_report()
  rep:write()
  local md = rep:render().md
  t.no_match(md, "[%z\1-\8\11-\31\127]", "no control character (a report shown with cat drives no terminal)")
  t.no_match(md, "\194[\128-\159]", "no C1 control")
  local block = md:match("\n```text\n(.-)\n```\n")
  t.truthy(block, "the error in one code block")
  t.match(block, "^a%^%[%]0;title%^G%^%[%[2J%^M\nforged line M%-%^%[31m\n'''\n<img src=x onerror=alert%(1%)>\n~~~$",
          "the error verbatim but for control characters and fences")
  local rest = md:gsub("\n```text\n.-\n```\n", "\n")
  t.no_match(rest, "<", "no HTML tag or autolink can start")
  for i = 1, #rest do
    local c = rest:sub(i, i)
    if c == "[" or c == "]" then
      local slashes = 0
      while rest:sub(i - 1 - slashes, i - 1 - slashes) == "\\" do slashes = slashes + 1 end
      t.truthy(slashes % 2 == 1, "every " .. c .. " escaped: ..." .. rest:sub(math.max(1, i - 30), i + 10))
    end
  end
  t.match(rest, "\\%[x\\%]%(javascript:alert%(1%)%)", "the link as text")
  t.match(rest, "!\\%[\\%]%(http://evil%.example/x%.png%)", "the image as text")
  t.match(rest, "&lt;img src=x onerror=alert%(1%)&gt;", "the tag as text")
  t.match(rest, "&amp;lt;img", "an entity stays text")
  -- Unescaped | in a table line: the same count in every row as in its header.
  local function pipes(line) return select(2, line:gsub("\\\\", ""):gsub("\\|", ""):gsub("|", "|")) end
  local header
  for line in (rest .. "\n"):gmatch("([^\n]*)\n") do
    t.no_match(line, "^%s*~~~", "no code fence opened: " .. line)
    t.no_match(line, "^%s*```", "no code fence opened: " .. line)
    t.no_match(line, "^ ? ? ?%[", "no link reference definition: " .. line)
    t.no_match(line, "^forged", "no line of the machine's own")
    t.truthy(not line:match("^#") or line:match("^##? [^#]"), "headings are the report's own: " .. line)
    if line:match("^|") then
      header = header or pipes(line)
      t.eq(pipes(line), header, "cells in the table row " .. line)
    else
      header = nil
    end
  end
  t.match(rest, "\n\\~~~ the rest of the report is code", "a GPU name starting with ~~~ stays a paragraph")
end)

t.test("report.html: the same strings escaped, no tag or attribute of theirs", function()
  local html = evil_report():render().html
  t.no_match(html, "[%z\1-\8\11-\31\127]", "no control character")
  t.no_match(html, "\194[\128-\159]", "no C1 control")
  t.no_match(html, "<img")
  t.no_match(html, "<http")
  t.no_match(html, "href=")
  t.no_match(html, "src=[^x]")
  t.match(html, "&lt;img src=x onerror=alert%(1%)&gt;")
  t.match(html, "%[x%]%(javascript:alert%(1%)%)", "a link's text, shown as is (HTML has no Markdown)")
  t.match(html, "&amp;lt;img src=x&amp;gt;", "an entity stays text")
  t.match(html, "a%^%[%]0;title%^G%^%[%[2J%^M")
  -- every tag on the page is one report_html or report_svg writes
  local allowed = { html = 1, head = 1, meta = 1, title = 1, style = 1, body = 1, main = 1, h1 = 1, h2 = 1, p = 1, div = 1,
                    small = 1, table = 1, thead = 1, tbody = 1, tr = 1, th = 1, td = 1, pre = 1, svg = 1, text = 1, line = 1,
                    g = 1, circle = 1, polyline = 1, rect = 1 }
  for tag in html:gmatch("<(%w+)") do t.truthy(allowed[tag:lower()], "tag <" .. tag .. ">") end
end)

t.done()
