-- runara.report on fixed inputs: which sections a report has (only those with data), the
-- reference comparison (only where it applies), sample-size warnings, the PARTIAL banner,
-- escaping of what scripts and machines write, the sweep's files, every error at the caller's line.
local t = require("t")
local report = require("runara.report")
local render = require("runara.report_render")
local fx = require("fixtures.report_results")

local HERE = "test_report.lua:%d+:"

-- The charts of a page: { {title =, series = {names...}, svg =}, ... }.
local function charts(html)
  local out = {}
  for chart in html:gmatch("<svg.-</svg>") do
    local c = { title = chart:match('aria%-label="([^"]*)"'), series = {}, svg = chart }
    for name in chart:gmatch('data%-series="([^"]*)"') do c.series[#c.series + 1] = name end
    out[#out + 1] = c
  end
  return out
end

local function chart(html, title)
  for _, c in ipairs(charts(html)) do if c.title == title then return c end end
end

-- Circles in one series of one chart.
local function points(c, series)
  local body = c.svg:match('data%-series="' .. series:gsub("%p", "%%%0") .. '".-</g>')
  if not body then return -1 end
  local n = 0
  for _ in body:gmatch("<circle") do n = n + 1 end
  return n
end

local function flagship()
  local rep = report.new{ title = "Llama-3.3-70B-Instruct FP8 on gpu-mi300x1-192gb", reference = "llama70b_fp8" }
  rep:metadata{ model = "meta-llama/Llama-3.3-70B-Instruct", quantization = "FP8", gpu = "AMD Instinct MI300X" }
  for _, l in ipairs(fx.suite_loads()) do rep:add_load(l[1], l[2], l[3]) end
  rep:add_gpu(fx.gpu())
  return rep
end

t.test("add_load: the same name again replaces the load (a repeated load's runs so far), others append", function()
  local rep = report.new{ title = "x" }
  rep:add_load("ttft", { output_throughput = 10, completed = 5 }, { kind = "latency" })
  rep:add_load("ttft", { output_throughput = 12, completed = 5, intervals = { output_throughput = { low = 9, high = 15 } },
                         repeats = { count = 2, method = "m" } }, { kind = "latency" })
  rep:add_load("other", { output_throughput = 1 })
  t.eq(#rep.loads, 2)
  local doc = rep:document()
  t.eq(doc.benchmarks.loads.ttft.output_throughput, 12)
  t.eq(doc.benchmarks.loads.ttft.intervals.output_throughput.low, 9)
  t.eq(doc.benchmarks.loads.ttft.repeats.count, 2)
end)

t.test("flagship: the reference comparison, published measurements with their source and conditions, no ratio", function()
  local rep = flagship()
  local r = rep:render()
  t.match(r.md, "## Comparison")
  t.match(r.md, "| Metric | This run | MLPerf v4.1 8× H100, per GPU %(other conditions%) | Notes |")
  t.match(r.md, "| Throughput %(tok/s%) | 45.6 | none published | single user |")
  t.match(r.md, "| Batch throughput %(tok/s%) | 816 | 3065.6 | 32 concurrent; reference: MLPerf Offline")
  t.match(r.md, "Reference: MLCommons, MLPerf Inference v4.1")
  t.match(r.md, "Conditions differ from this run's: Llama%-2%-70B, not Llama%-3%.3%-70B")
  t.match(r.html, "Conditions differ from this run")
  t.no_match(r.md, "estimate")
  t.no_match(r.md, "§", "no plan section numbers")
  t.no_match(r.md, "not measured")
  local doc = rep:document()
  t.eq(doc.comparable_nvidia.h100_equivalent_throughput_ratio, nil, "no ratio across other conditions")
  t.eq(doc.comparable_nvidia.like_for_like, false)
  t.match(doc.comparable_nvidia.notes, "conditions differ")
  t.match(doc.comparable_nvidia.notes, "no ratio is given")
end)

t.test("flagship: VRAM is what vLLM allocated, never set against another GPU's figure", function()
  local rep = flagship()
  rep:metadata{ gpu_memory_utilization = 0.9, kv_cache = "48392 GPU blocks (vLLM's log)" }
  local r = rep:render()
  t.match(r.md, "| VRAM allocated | [%d.]+ GiB | — | allocated by vLLM %(gpu_memory_utilization=0%.9%), not the model's need; KV cache 48392 GPU blocks")
  t.match(r.html, "VRAM allocated by vLLM %(gpu_memory_utilization=0%.9%)")
  t.no_match(r.md, "~75")
  t.match(rep:summary(), "VRAM allocated by vLLM %(gpu_memory_utilization=0%.9%)")
end)

t.test("rep:headline: a scenario's own figures first in the summary, the cards, report.md and results.json", function()
  local rep = report.new{ title = "GEMM TFLOPS on x" }
  rep:metadata{ gpu_count = 8 }
  rep:headline("best BF16 GEMM (one GPU)", 658.04, "TFLOPS", { digits = 0, note = "SemiAnalysis BF16: MI300X ~620" })
  rep:headline("MLPerf Offline result", "VALID")
  rep:headline("best BF16 GEMM (one GPU)", 660, "TFLOPS", { digits = 0 })  -- the same label replaces
  rep:add_gpu(fx.gpu())
  local sum = rep:summary()
  t.match(sum, "best BF16 GEMM %(one GPU%)%s+660 TFLOPS")
  t.match(sum, "MLPerf Offline result%s+VALID")
  t.match(sum, "peak power per GPU %(highest of 8%)")
  t.truthy(sum:find("best BF16") < sum:find("peak power"), "the headline before power and VRAM")
  local r = rep:render()
  t.match(r.md, "## Headline")
  t.match(r.md, "| best BF16 GEMM %(one GPU%) | 660 TFLOPS |")
  t.match(r.html, 'class="card headline"')
  local doc = rep:document()
  t.eq(#doc.headline, 2)
  t.eq(doc.headline[1].value, 660)
  t.eq(doc.headline[2].value, "VALID")
  t.raises(function() rep:headline("x", 0 / 0) end, "finite number or a string", "test_report.lua:%d+:")
  t.raises(function() rep:headline("", 1) end, "non-empty string", "test_report.lua:%d+:")
end)

t.test("flagship: only the measured rows of the reference comparison", function()
  local rep = report.new{ title = "x", reference = "llama70b_fp8" }
  rep:add_load("throughput", fx.load("throughput", 1, 2, { output_throughput = 44 }), { kind = "throughput" })
  local md = rep:render().md
  t.match(md, "| Throughput %(tok/s%) | 44.0 |")
  t.no_match(md, "TTFT %(ms%)")
  t.no_match(md, "Power draw")
  t.no_match(md, "not measured")
end)

t.test("a reference is shown only for its own model and quantization", function()
  local rep = flagship()
  rep:metadata{ model = "Qwen/Qwen2.5-7B-Instruct" }
  local doc, view = rep:document()
  t.eq(doc.comparable_nvidia, nil)
  t.eq(view.reference, nil)
  local r = rep:render()
  t.no_match(r.md, "## Comparison")
  t.no_match(r.md, "H100 FP8")
  t.no_match(r.html, "H100 FP8")
  rep:metadata{ model = "meta-llama/Llama-3.3-70B-Instruct", quantization = "BF16" }
  t.no_match(rep:render().md, "## Comparison", "another quantization")
end)

t.test("a sweep added again under its name replaces the earlier one (points finished so far)", function()
  local rep = report.new{ title = "vLLM serving sweep" }
  rep:add_sweep("sweep", { fx.load("sweep-c64", 64, 64) }, { files = false })
  rep:add_sweep("sweep", { fx.load("sweep-c64", 64, 64), fx.load("sweep-c256", 256, 256) }, { files = false })
  rep:add_sweep("other", { fx.load("other-c8", 8, 8) }, { files = false })
  t.eq(#rep.sweeps, 2)
  t.eq(#rep.sweeps[1].rows, 2)
  t.eq(rep.sweeps[2].name, "other")
  local _, count = rep:render().md:gsub("## Sweep: sweep", "")
  t.eq(count, 1)
end)

t.test("a sweep's report has no reference comparison and no table of 'not measured'", function()
  local rep = report.new{ title = "vLLM serving sweep" }
  rep:add_sweep("sweep", { fx.load("sweep-c64", 64, 64), fx.load("sweep-c256", 256, 256) }, { files = false })
  local r = rep:render()
  t.no_match(r.md, "## Comparison")
  t.no_match(r.md, "not measured")
  t.no_match(r.md, "single user")
  t.no_match(r.html, "32 concurrent")
  t.match(r.md, "## Sweep: sweep")
  local c = chart(r.html, "Throughput vs concurrency")
  t.truthy(c, "throughput chart")
  t.eq(points(c, "output tok/s"), 2)
  t.eq(points(c, "total tok/s"), -1, "total tok/s has a chart (an axis) of its own")
  local total = chart(r.html, "Total throughput vs concurrency")
  t.truthy(total, "total throughput chart")
  t.eq(points(total, "total tok/s"), 2)
  t.eq(points(total, "output tok/s"), -1)
  t.eq(chart(r.html, "GPU power"), nil, "no GPU chart without GPU samples")
end)

t.test("a GEMM report: its table and the GPU, no serving sections, no load folders in the footer", function()
  local rep = report.new{ title = "GEMM TFLOPS on gpu-mi300x1-192gb" }
  rep:add_table("GEMM", { columns = { "shape", "TFLOPS" }, rows = { { "(8192, 8192, 8192)", 644 } } })
  rep:add_gpu(fx.gpu({ marks = { { t_s = 2, label = "gemm" } }, seconds = 20 }))
  rep:add_file("gemm.jsonl", "one line per shape and dtype")
  local r = rep:render()
  t.no_match(r.md, "Comparison")
  t.no_match(r.md, "## Loads")
  t.no_match(r.md, "folder per load")
  t.no_match(r.md, "each load's full metrics")
  t.match(r.md, "gemm%.jsonl %(one line per shape and dtype%)")
  t.match(r.md, "| gemm | 18%.0 | 18 | 600 |", "the GEMM phase's own power")
  t.eq(chart(r.html, "Throughput vs concurrency"), nil)
  t.truthy(chart(r.html, "GPU power"), "GPU power chart")
  t.match(r.html, 'class="mark" data%-label="gemm"')
  t.no_match(r.html, "not measured")
end)

t.test("PARTIAL: the banner, the error, and what was measured before it", function()
  local rep = flagship()
  rep:fail("vllm.start: the server exited before it was ready\nHIP out of memory")
  local doc = rep:document()
  t.eq(doc.report.status, "partial")
  local r = rep:render()
  t.match(r.md, "> %*%*PARTIAL — the run failed before it finished: vllm%.start: the server exited before it was ready%*%*")
  t.match(r.md, "## Error\n\n```text\nvllm%.start")
  t.match(r.html, '<div class="banner partial" id="partial">PARTIAL')
  t.match(r.md, "| concurrent_32 | 32 | 64 / 0 |", "the loads measured before the failure")
end)

t.test("sample-size warnings: a p99 from fewer than 100 requests, a median from fewer than 10", function()
  local rep = report.new{ title = "x" }
  rep:add_load("few", fx.load("few", 1, 2), { kind = "load" })
  rep:add_load("many", fx.load("many", 64, 500), { kind = "load" })
  local md = rep:render().md
  t.match(md, "| few | 1 | 2 / 0 | [%d%.]+ | 126† / 129† |")
  t.match(md, "| many | 64 | 500 / 0 | [%d%.]+ | 126 / 129 |")
  t.match(md, "a p99 needs at least 100")
  t.match(md, "Requests measured: few 2%.")
  local medium = report.new{ title = "y" }
  medium:add_load("mid", fx.load("mid", 8, 50), { kind = "load" })
  t.match(medium:render().md, "| mid | 8 | 50 / 0 | [%d%.]+ | 126 / 129† |")
  t.eq(report.MIN_SAMPLES.p99, 100)
end)

t.test("a load whose requests waited: the from-schedule TTFT and the queue beside vLLM's, only past 5 %", function()
  local rep = report.new{ title = "x" }
  rep:add_load("capped", fx.load("capped", 32, 200, { mean_ttft_ms = 80.6, median_ttft_ms = 80.1, p99_ttft_ms = 85.3,
    mean_ttft_from_schedule_ms = 2778.5, median_ttft_from_schedule_ms = 2701.2, p99_ttft_from_schedule_ms = 5120.4,
    count_ttft_from_schedule = 200, mean_queue_ms = 2697.9 }), { kind = "load" })
  rep:add_load("kept", fx.load("kept", 4, 200, { mean_ttft_from_schedule_ms = 128, median_ttft_from_schedule_ms = 127,
    p99_ttft_from_schedule_ms = 131, count_ttft_from_schedule = 200, mean_queue_ms = 2 }), { kind = "load" })
  local out = rep:render()
  t.match(out.md, "| capped | 32 | 200 / 0 | [%d%.]+ | 80%.1 / 85%.3 %(from schedule 2701 / 5120; mean queue 2698%) |")
  t.match(out.md, "| kept | 4 | 200 / 0 | [%d%.]+ | 126 / 129 |")
  t.match(out.md, "Where requests waited before they were sent %(capped%)")
  t.match(out.html, "80%.1 / 85%.3 %(from schedule 2701 / 5120; mean queue 2698%)")
  t.match(out.html, "Where requests waited before they were sent %(capped%)")
  local plain = report.new{ title = "y" }
  plain:add_load("kept", fx.load("kept", 4, 200), { kind = "load" })
  t.eq(plain:render().md:find("from schedule", 1, true), nil)
end)

t.test("sample-size warnings in charts: points from too few requests are hollow", function()
  local rep = report.new{ title = "x" }
  rep:add_load("c4", fx.load("c4", 4, 8), { kind = "concurrent", concurrency = 4 })
  rep:add_load("c64", fx.load("c64", 64, 640), { kind = "concurrent", concurrency = 64 })
  local c = chart(rep:render().html, "TTFT vs concurrency")
  local p99 = c.svg:match('data%-series="TTFT p99".-</g>')
  local few = 0
  for _ in p99:gmatch('class="few"') do few = few + 1 end
  t.eq(few, 1)
  t.match(p99, 'data%-samples="8"')
  t.match(c.svg, "hollow points")
end)

t.test("markdown: links, images and HTML from machine-controlled strings stay text", function()
  local rep = report.new{ title = "[t](javascript:alert(1))" }
  rep:metadata{ gpu = "[x](javascript:alert(1))", driver_version = "![img](http://evil.example/x.png)",
                framework = "<img src=x onerror=alert(1)>", model = "a|b`c`\\[d]" }
  rep:add_load("<script>alert(1)</script>", fx.load("x", 1, 2), { kind = "load" })
  rep:add_table("![t](http://evil.example/t.png)", { columns = { "[c](javascript:x)" }, rows = { { "[cell](javascript:alert(2))" } },
                                                     caption = "[cap](javascript:alert(3))" })
  rep:fail("[e](javascript:alert(4))")
  local r = rep:render()
  t.match(r.md, "```text\n%[e%]%(javascript:alert%(4%)%)\n```", "the error verbatim, in a code block (Markdown shows it as text)")
  r.md = r.md:gsub("```text\n.-\n```", "")
  t.no_match(r.md, "[^\\]%]%(", "no link or image syntax survives")
  t.no_match(r.md, "[^\\]%[", "every [ escaped")
  t.no_match(r.md, "[^\\]%]", "every ] escaped")
  t.no_match(r.md, "<img")
  t.no_match(r.md, "<script")
  t.match(r.md, "\\%[x\\%]%(javascript:alert%(1%)%)")
  t.match(r.md, "a\\|b\\`c\\`\\\\\\%[d\\%]", "pipe, backticks and backslash escaped")
  t.no_match(r.html, "<img")
  t.no_match(r.html, "<script")
  t.match(r.html, "&lt;script&gt;")
end)

t.test("the footer names only files that exist: load folders, the sweep's table, run.log", function()
  local rep = report.new{ title = "x" }
  rep:add_load("throughput", fx.load("mi300x_throughput", 1, 2), { kind = "throughput" })
  rep:add_sweep("sweep", { fx.load("sweep-c64", 64, 64) })  -- writes sweep.json / sweep.csv into this test's output
  local md = rep:render().md
  t.match(md, "a folder per load with its results%.json and requests%.jsonl %(mi300x_throughput/, sweep%-c64/%)")
  t.match(md, "sweep%.csv %(the sweep's table, one row per point%); sweep%.json")
  t.match(md, "run%.log")
end)

t.test("sweep.csv: http_load's own sweep columns, one row per point", function()
  local rows, csv = report.sweep_table({ fx.load("sweep-c64", 64, 64, { request_rate = "inf", p99_ttft_ms = 0 / 0 }),
                                         fx.load("sweep-c256", 256, 256, { thresholds_crossed = { "ttft_p99_ms: 612 > 500" } }) })
  t.eq(#rows, 2)
  local header = csv:match("^[^\n]+")
  t.eq(header, "label,load_model,max_concurrency,request_rate,num_prompts,completed,failed,duration,request_throughput,request_goodput," ..
    "output_throughput,total_token_throughput,mean_ttft_ms,median_ttft_ms,p99_ttft_ms,mean_tpot_ms,median_tpot_ms,p99_tpot_ms," ..
    "mean_itl_ms,median_itl_ms,p99_itl_ms,mean_e2el_ms,median_e2el_ms,p99_e2el_ms,max_concurrent_requests,total_input_tokens," ..
    "total_output_tokens,thresholds_crossed")
  t.match(csv, "\nsweep%-c64,,64,inf,64,64,0,")
  t.eq(rows[1].p99_ttft_ms, nil, "NaN is left empty")
  t.match(csv, ",1\n$", "crossed thresholds counted")
end)

t.test("vLLM's own metrics are charted and summarised when collected", function()
  local rep = report.new{ title = "x" }
  rep:add_server_metrics(fx.server_metrics())
  local doc = rep:document()
  t.truthy(doc.benchmarks.vllm_metrics, "benchmarks.vllm_metrics")
  local r = rep:render()
  local c = chart(r.html, "Requests running and waiting")
  t.truthy(c, "running/waiting chart")
  t.eq(table.concat(c.series, ","), "running,waiting")
  t.eq(points(c, "running"), 30)
  local kv = chart(r.html, "KV cache used")
  t.truthy(kv, "KV cache chart")
  t.match(kv.svg, 'data%-y="96%.67"', "the fraction shown as a percentage")
  t.match(r.md, "| vllm:num_requests_running | 20%.50 | 32%.00 | 32%.00 | — |")
  t.match(r.md, "| vllm:generation_tokens_total | — | — | 11600 | 11600 |")
  -- Without samples (only a summary set into benchmarks.vllm_metrics): the table, no chart.
  local only = report.new{ title = "y" }
  only:set("benchmarks.vllm_metrics", fx.server_metrics().summary)
  local r2 = only:render()
  t.match(r2.md, "## Server metrics")
  t.eq(chart(r2.html, "Requests running and waiting"), nil)
end)

t.test("GPU by phase: each load's own phase, with its samples", function()
  local rep = report.new{ title = "x" }
  rep:add_gpu(fx.gpu())
  local md = rep:render().md
  t.match(md, "## GPU by phase")
  t.match(md, "| model_load | 5%.0 | 5 | 600 |")
  t.match(md, "| throughput | 10%.0 | 10 | 600 |")
  t.no_match(md, "throughput end", "the gap after a load is not a phase of its own")
end)

t.test("errors point at the caller's line", function()
  local rep = report.new{ title = "x" }
  t.raises(function() rep:add_load("x", 5) end, "report:add_load: argument 'result' must be an http_load.run result", HERE)
  t.raises(function() rep:add_load("x", {}, { kind = "bogus" }) end, "option 'kind' must be", HERE)
  t.raises(function() rep:add_load("x", {}, { machine = "nope" }) end, "no machine 'nope'", HERE)
  t.raises(function() rep:add_gpu({}, { machine = "nope" }) end, "report:add_gpu: option 'machine'", HERE)
  t.raises(function() rep:machine("a b") end, "report:machine: argument 'key'", HERE)
  local view = rep:machine("mi300x", { label = "MI300X" })
  t.raises(function() view:add_load("x", {}, { kind = "bogus" }) end, "option 'kind' must be", HERE)
  t.raises(function() view:add_load("x", nil) end, "argument 'result'", HERE)
  t.raises(function() report.new{ reference = "nope" } end, "unknown reference 'nope'", HERE)
  t.raises(function() rep:add_file(nil) end, "report:add_file", HERE)
end)

t.test("a renderer's failure still leaves a report, and write() does not raise", function()
  local rep = report.new{ title = "x" }
  rep.tables[1] = { name = "broken", columns = "not a list", rows = {} }  -- what add_table would refuse
  local paths = rep:write()
  t.match(paths.md, "report%.md$")
end)

t.test("report:add_chart: a scenario's own chart in report.html, its points as a table in report.md", function()
  local rep = report.new{ title = "training" }
  rep:add_chart("Scaling efficiency", { x_label = "GPUs", y_label = "efficiency (%)",
    series = { { name = "7b", points = { { 1, 100 }, { 2, 77.6 }, { 4, 85.7 } } } } })
  local r = rep:render()
  t.match(r.html, '<h2>Scaling efficiency</h2>', "its heading")
  local g = r.html:match('data%-series="7b".-</g>')
  t.truthy(g, "a series named 7b")
  local _, n = g:gsub("<circle", "")
  t.eq(n, 3, "one point per GPU count")
  t.match(r.md, "| 7b | 4 | 85.70 |", "the md table")
  t.raises(function() rep:add_chart("x", { series = { { name = "a" } } }) end, "report:add_chart: series 1 has no points list", "test_report.lua:%d+:")
  t.raises(function() rep:add_chart("x", 5) end, "report:add_chart: argument must be", "test_report.lua:%d+:")
end)

t.test("thresholds: a crossed gate in the banner, a Thresholds table, the summary and report.status 'thresholds'", function()
  local rep = report.new{ title = "gated" }
  rep:add_load("concurrent_32", { output_throughput = 100, completed = 64, p99_ttft_ms = 27.5,
    thresholds = { ttft_p99_ms = { limit = 5, value = 27.5, ok = false }, failure_rate = { limit = 0.01, value = 0, ok = true } },
    thresholds_crossed = { "ttft_p99_ms: 27.50 > 5" } })
  rep:add_sweep("sweep", { { label = "sweep-c8", output_throughput = 10, completed = 8,
    thresholds = { min_output_throughput = { limit = 20, value = 10, ok = false } }, thresholds_crossed = { "x" } } }, { files = false })
  local doc = rep:document()
  t.eq(doc.report.status, "thresholds")
  t.eq(doc.report.thresholds_crossed, 2)
  t.eq(#doc.report.thresholds, 3)
  t.eq(doc.benchmarks.loads.concurrent_32.thresholds.ttft_p99_ms.ok, false)
  local r = rep:render()
  t.match(r.md, "THRESHOLDS CROSSED — 2 of 3 gates: ttft_p99_ms at concurrent_32: 27%.50, above its limit of 5")
  t.match(r.md, "## Thresholds")
  t.match(r.md, "| concurrent_32 | ttft_p99_ms | at most 5 | 27%.50 | CROSSED |")
  t.match(r.md, "| concurrent_32 | failure_rate | at most 0%.01 | 0%.00 | passed |")
  t.match(r.md, "| sweep%-c8 | min_output_throughput | at least 20 | 10%.00 | CROSSED |")
  t.match(r.html, 'id="thresholds%-crossed"')
  t.match(r.html, '<h2>Thresholds</h2>')
  local s = rep:summary()
  t.match(s, "THRESHOLDS CROSSED: 2 of 3 %(exit status 4%)")
  t.match(s, "min_output_throughput at sweep%-c8: 10%.00, below its limit of 20")
  -- A failed run stays PARTIAL whatever its gates said.
  rep:fail("boom")
  t.eq(rep:document().report.status, "partial")
end)

t.test("thresholds: all passed is said once; a load without gates has no Thresholds section", function()
  local rep = report.new{ title = "gated" }
  rep:add_load("a", { output_throughput = 1, completed = 1, thresholds = { ttft_p99_ms = { limit = 500, value = 20, ok = true } },
                      thresholds_crossed = {} })
  t.eq(rep:document().report.status, "complete")
  t.match(rep:summary(), "thresholds: all 1 passed")
  t.match(rep:render().md, "| a | ttft_p99_ms | at most 500 | 20%.00 | passed |")
  local plain = report.new{ title = "plain" }
  plain:add_load("a", { output_throughput = 1, completed = 1 })
  t.eq(plain:document().report.thresholds, nil)
  t.no_match(plain:render().md, "Thresholds")
  t.no_match(plain:summary(), "thresholds")
end)

t.done()
