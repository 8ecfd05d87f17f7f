-- runara.report with several machines (scripts/compare_mi300x_h100.lua): one series per machine
-- in every chart, both GPUs, both costs, every load, a comparison table with the ratio; a failed
-- side reported as such while the other's results stay; a droplet billed twice counted once.
local t = require("t")
local report = require("runara.report")
local fx = require("fixtures.report_results")

local HERE = "test_report_compare.lua:%d+:"

local function charts(html)
  local out = {}
  for chart in html:gmatch("<svg.-</svg>") do
    local c = { title = chart:match('aria%-label="([^"]*)"'), series = {}, legend = 0, svg = chart }
    for name in chart:gmatch('data%-series="([^"]*)"') do c.series[#c.series + 1] = name end
    for _ in chart:gmatch('<g class="legend">') do c.legend = c.legend + 1 end
    out[#out + 1] = c
  end
  return out
end

local function circles(c, series)
  local body = c.svg:match('data%-series="' .. series:gsub("%p", "%%%0") .. '".-</g>')
  local n = 0
  for _ in (body or ""):gmatch("<circle") do n = n + 1 end
  return n
end

-- Two machines measured as the compare script does it: each through its own view.
local function compare(opts)
  opts = opts or {}
  local rep = report.new{ title = "MI300X vs H100: meta-llama/Llama-3.3-70B-Instruct FP8", simulated = true, reference = opts.reference }
  rep:metadata{ model = "meta-llama/Llama-3.3-70B-Instruct", quantization = "FP8" }
  local sides = {
    { key = "mi300x", label = "MI300X", gpu = "AMD Instinct MI300X", scale = 1, cost = 0.0211, hourly = 1.99, rocm = "6.2.0" },
    { key = "h100", label = "H100", gpu = "NVIDIA H100 80GB HBM3", scale = 0.9, cost = 0.0359, hourly = 3.39, cuda = "13.1" },
  }
  for _, s in ipairs(sides) do
    local view = rep:machine(s.key, { label = s.label })
    local ok, err = view:run(function()
      view:bill(fx.droplet(s.cost, s.key))
      view:metadata{ gpu = s.gpu, size = s.key, region = "atl1", hourly_usd = s.hourly, rocm_version = s.rocm, cuda_version = s.cuda,
                     framework = "vLLM 0.6.4" }
      if opts.fail == s.key or opts.fail == "both" then
        for i, l in ipairs(fx.suite_loads(s.scale)) do if i <= 2 then view:add_load(l[1], l[2], l[3]) end end
        error("compare_mi300x_h100.lua:62: vllm.start: the server on " .. s.key .. " exited before it was ready", 0)
      end
      for _, l in ipairs(fx.suite_loads(s.scale)) do view:add_load(l[1], l[2], l[3]) end
      view:add_gpu(fx.gpu({ model = s.gpu, max_power_w = s.key == "h100" and 557 or 610,
                            watts = function(tt) return (tt < 5 and 140 or 600) * s.scale end }))
      view:add_server_metrics(fx.server_metrics())
    end)
    s.ok, s.err = ok, err
  end
  return rep, sides
end

t.test("compare: every chart has one series per machine, never one line across both", function()
  local rep = compare()
  local html = rep:render().html
  local seen = 0
  for _, c in ipairs(charts(html)) do
    seen = seen + 1
    local mi, h = 0, 0
    for _, name in ipairs(c.series) do
      local is_mi, is_h = name:match("^MI300X ") ~= nil, name:match("^H100 ") ~= nil
      t.truthy(is_mi ~= is_h, "series '" .. name .. "' of '" .. c.title .. "' belongs to exactly one machine")
      if is_mi then mi = mi + 1 else h = h + 1 end
    end
    t.truthy(mi > 0 and mi == h, "'" .. c.title .. "': as many MI300X series as H100 ones (" .. mi .. ", " .. h .. ")")
    t.eq(c.legend, #c.series, "'" .. c.title .. "': a legend entry per series")
  end
  t.eq(seen, 8, "output and total throughput, TTFT, TPOT, power, VRAM, requests, KV cache")
  local tput
  for _, c in ipairs(charts(html)) do if c.title == "Throughput vs concurrency" then tput = c end end
  t.eq(circles(tput, "MI300X output tok/s"), 3, "MI300X at concurrency 1, 10, 32")
  t.eq(circles(tput, "H100 output tok/s"), 3)
  t.match(tput.svg, 'data%-series="H100 output tok/s"[^>]*>.-data%-y="734%.4"', "H100's own figure (816 × 0.9)")
end)

t.test("compare: GPU charts and tables for both machines", function()
  local rep = compare()
  local r = rep:render()
  local power
  for _, c in ipairs(charts(r.html)) do if c.title == "GPU power" then power = c end end
  t.eq(table.concat(power.series, ","), "MI300X power GPU 0,H100 power GPU 0")
  t.eq(circles(power, "H100 power GPU 0"), 40)
  t.no_match(power.svg, 'class="mark"', "no phase marks on a chart of two machines' clocks")
  t.match(r.md, "| MI300X | 0 | 500 | 610 |")
  t.match(r.md, "| H100 | 0 | 500 | 557 |")
  t.match(r.md, "| MI300X | throughput | 10%.0 | 10 |", "GPU by phase, per machine")
  t.match(r.md, "| H100 | throughput | 10%.0 | 10 |")
end)

t.test("compare: the comparison table has both machines' figures and the ratio", function()
  local rep = compare()
  local r = rep:render()
  t.match(r.md, "| Metric | MI300X %(simulated%) | H100 %(simulated%) | MI300X / H100 | MI300X vs H100 | Notes |")
  t.match(r.md, "| single%-stream throughput %(tok/s%) | 45%.6 | 41%.0 | 1%.11 | %+11%.1 %%, better | higher is better |")
  t.match(r.md, "| throughput at 32 concurrent %(tok/s%) | 816 | 734 | 1%.11 | %+11%.1 %%, better |")
  t.match(r.md, "| peak power %(W%) | 610 | 557 | 1%.10 | %+9%.5 %% |", "a figure without a direction: a difference, no verdict")
  t.match(r.md, "| machine cost %(USD%) | 0%.0211 | 0%.0359 | 0%.59 |")
  t.match(r.md, "| TTFT median %(ms%) | 98%.9† | 110† |", "a median of 5 requests is flagged")
  t.no_match(r.md, "not measured")
  t.no_match(r.md, "single user", "no reference comparison in a comparison of machines")
  local doc = rep:document()
  t.near(doc.comparison.metrics.single_stream_tps.ratio, 1.111, 0.001)
  -- the verdict runara compare gives runs (runara.comparison), the first machine against the second
  t.eq(doc.comparison.baseline, "h100")
  t.eq(doc.comparison.metrics.single_stream_tps.verdict, "better")
  t.near(doc.comparison.metrics.single_stream_tps.difference_pct, 11.11, 0.01)
  t.eq(doc.comparison.metrics.ttft_median_ms.verdict, "better", "a lower TTFT is better")
  t.eq(doc.comparison.machines[2], "h100")
  t.eq(doc.comparable_nvidia.reference, "H100 measured in this run")
  t.near(doc.comparable_nvidia.h100_equivalent_throughput_ratio, 1.111, 0.001)
  t.eq(doc.benchmarks.machines.h100.throughput.tokens_per_second, 45.6 * 0.9)
  t.eq(doc.benchmarks.loads["H100 ttft"].median_ttft_ms, 98.9 / 0.9)
end)

t.test("compare: both costs, all loads (TTFT included), each machine's description", function()
  local rep = compare()
  local doc = rep:document()
  t.eq(doc.machines.mi300x.cost_usd, 0.0211)
  t.eq(doc.machines.h100.cost_usd, 0.0359)
  t.eq(doc.machines.h100.cuda_version, "13.1")
  t.eq(doc.machines.h100.status, "complete")
  t.near(doc.metadata.cost_usd, 0.057, 1e-9)
  local md = rep:render().md
  t.match(md, "Machine cost: %$0%.0570 in all %(each machine's below%) so far, read .- before teardown")
  t.match(md, "| MI300X | AMD Instinct MI300X | mi300x | atl1 | — | ROCm 6%.2%.0 | vLLM 0%.6%.4 | %$1%.99/h | %$0%.0211 | complete |")
  t.match(md, "| H100 | NVIDIA H100 80GB HBM3 | h100 | atl1 | — | CUDA 13%.1 | vLLM 0%.6%.4 | %$3%.39/h | %$0%.0359 | complete |")
  for _, load in ipairs({ "throughput", "ttft", "concurrent_10", "concurrent_32" }) do
    t.match(md, "| MI300X | " .. load .. " |", "MI300X " .. load)
    t.match(md, "| H100 | " .. load .. " |", "H100 " .. load)
  end
  t.match(md, "| MI300X | ttft |.-\n| H100 | ttft |", "one load's machines next to each other")
end)

t.test("compare: a failed side is reported as failed, the other side's results kept", function()
  local rep, sides = compare({ fail = "h100" })
  t.eq(sides[1].ok, true)
  t.eq(sides[2].ok, false)
  t.match(sides[2].err, "vllm%.start")
  rep:fail("1 of 2 machines failed: H100 (each one's error is in the report)")
  local doc = rep:document()
  t.eq(doc.report.status, "partial")
  t.eq(doc.machines.h100.status, "failed")
  t.match(doc.machines.h100.error, "exited before it was ready")
  t.eq(doc.machines.h100.cost_usd, 0.0359, "what the failed side cost")
  t.match(doc.report.error, "H100 failed: compare_mi300x_h100%.lua:62: vllm%.start")
  local r = rep:render()
  t.match(r.md, "PARTIAL — 1 of 2 machines failed: H100 %(each one's error is in the report%) %(MI300X: measured, below%)")
  t.match(r.md, "| H100 %(failed%) %(simulated%) |", "the failed column")
  t.match(r.md, "| single%-stream throughput %(tok/s%) | 45%.6 | 41%.0 | 1%.11 |", "the failed side's loads before it failed")
  t.match(r.md, "| throughput at 32 concurrent %(tok/s%) | 816 | failed | — |")
  t.match(r.md, "| failed: compare_mi300x_h100%.lua:62: vllm%.start: the server on h100 exited before it was ready |")
  t.match(r.html, '<td class="failed">failed: compare_mi300x_h100')
  local power
  for _, c in ipairs(charts(r.html)) do if c.title == "GPU power" then power = c end end
  t.eq(table.concat(power.series, ","), "MI300X power GPU 0", "only the machine that has samples")
end)

t.test("compare: both sides failed, the report still says what and where", function()
  local rep = compare({ fail = "both" })
  rep:fail("2 of 2 machines failed: MI300X, H100 (each one's error is in the report)")
  local doc = rep:document()
  t.match(doc.report.error, "MI300X failed: .*the server on mi300x")
  t.match(doc.report.error, "H100 failed: .*the server on h100")
  local r = rep:render()
  t.match(r.md, "PARTIAL — 2 of 2 machines failed")
  t.match(r.md, "## Error")
  t.no_match(r.md, "not measured")
end)

t.test("compare: a droplet billed to the report and to its machine is counted once", function()
  local rep = report.new{ title = "x" }
  local d = fx.droplet(1.5)
  rep:bill(d)
  rep:machine("a"):bill(d)
  rep:machine("b"):bill(fx.droplet(0.5))
  local doc = rep:document()
  t.eq(doc.metadata.cost_usd, 2.0)
  t.eq(doc.machines.a.cost_usd, 1.5)
end)

t.test("compare: the terminal summary lists both machines", function()
  local rep = compare({ fail = "h100" })
  local s = rep:summary()
  t.match(s, "MI300X%s+H100")
  t.match(s, "single%-stream throughput %(tok/s%)%s+45%.6%s+41")
  t.match(s, "H100 failed: compare_mi300x_h100")
end)

t.test("compare: a view's methods carry its machine; rep:machine returns the same view", function()
  local rep = report.new{ title = "x" }
  local a = rep:machine("a", { label = "A" })
  t.eq(rep:machine("a"), a)
  a:set("benchmarks.suite_profile", "quick")
  a:phase("boot")
  a:add_sweep("sweep", { fx.load("sweep-c64", 64, 64) }, { files = false })
  a:add_table("own", { columns = { "k" }, rows = { { "v" } } })
  local doc = rep:document()
  t.eq(doc.machines.a.benchmarks.suite_profile, "quick")
  t.eq(#doc.benchmarks.machines.a.sweep, 1)
  t.eq(doc.benchmarks.sweep, nil, "not the report's own sweep")
  t.eq(doc.comparison.metrics.sweep_peak_tps.values.a, 1600, "the sweep's best point in the comparison")
  local md = rep:render().md
  t.match(md, "## Sweep: sweep %(A%)")
  t.match(md, "## A: own")
  t.raises(function() a:add_sweep("s", 5) end, "report:add_sweep: argument 'results'", HERE)
end)

t.test("compare: collect_samples takes each running sampler's samples so far, without stopping it", function()
  local rep = report.new{ title = "x" }
  local stopped = false
  local function sampler(model)
    return { results = function() return fx.gpu({ model = model, seconds = 12 }) end, stop = function() stopped = true end, mark = function() end }
  end
  local a, b = rep:machine("a", { label = "A" }), rep:machine("b", { label = "B" })
  a.gpu_sampler, b.gpu_sampler = sampler("AMD Instinct MI300X"), sampler("NVIDIA H100 80GB HBM3")
  t.eq(rep:has_gpu(), false)
  rep:collect_samples()
  t.eq(stopped, false)
  t.eq(rep:has_gpu(), true)
  local doc = rep:document()
  t.eq(doc.benchmarks.machines.a.power.peak_w, 610)
  t.eq(doc.benchmarks.machines.b.power.peak_w, 610)
  t.eq(doc.benchmarks.power, nil, "no GPU of the report's own")
end)

t.done()
