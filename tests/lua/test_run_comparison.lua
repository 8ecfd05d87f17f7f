-- runara.comparison (the verdict rule) and runara.run_comparison with its renderer (what
-- `runara compare` writes) on fixed results.json documents: which way is better, the noise band,
-- intervals from repeats, thresholds, a run against itself, damaged and older runs, runs with no
-- load in common, a report of several machines as a run per machine, hostile text made inert.
local t = require("t")
local comparison = require("runara.comparison")
local rc = require("runara.run_comparison")
local render = require("runara.run_comparison_render")
local svg = require("runara.report_svg")

-- A results.json as the report writes it: one load per concurrency, headline figures, a manifest.
local function doc(opts)
  opts = opts or {}
  local tps, ttft, price = opts.tps or 1000, opts.ttft or 50, opts.price or 1.99
  local loads = {}
  for _, c in ipairs(opts.levels or { 1, 32 }) do
    loads["concurrent_" .. c] = { max_concurrency = c, output_throughput = tps * c, median_ttft_ms = ttft, p99_ttft_ms = ttft * 2,
      usd_per_million_output_tokens = price / 3600 / (tps * c) * 1e6, failed = opts.failed or 0, mean_power_w = 500,
      completed = opts.completed, request_goodput = opts.goodput,
      intervals = opts.intervals and { output_throughput = { tps * c * 0.9, tps * c * 1.1 } } or nil }
  end
  return {
    benchmarks = { loads = loads, throughput = { tokens_per_second = tps }, latency = { time_to_first_token_ms = ttft },
                   suite_profile = opts.profile },
    metadata = { simulated = opts.simulated or false, gpu = opts.gpu or "AMD Instinct MI300X" },
    manifest = { runara = { run_id = opts.id or "aaaa1111", version = "0.1.0" },
                 machines = { { label = "m", name = "m-" .. (opts.id or "aaaa1111"), gpu = opts.gpu or "AMD Instinct MI300X" } },
                 serving = { { machine = "m", command = "docker run --name runara-vllm-" .. (opts.id or "aaaa1111") .. " x" } },
                 params = { size = opts.size or "gpu-mi300x1-192gb" }, prompt_sets = opts.prompt_sets, max_tokens = opts.max_tokens },
    run = { script = "scripts/llama70b_fp8.lua", status = "ok" },
  }
end

local function run(label, d) return { label = label, dir = "/runs/" .. label, doc = d } end

local function row(cmp, load, id)
  for _, r in ipairs(cmp.rows) do if r.load == load and r.id == id then return r end end
end

t.test("comparison: which way is better, the noise band, intervals", function()
  t.eq((comparison.verdict(100, 94, "higher")), "worse")
  t.eq((comparison.verdict(100, 94, "lower")), "better", "a lower latency is better")
  t.eq((comparison.verdict(100, 101.9, "higher")), "within noise")
  t.eq((comparison.verdict(100, 102.1, "higher")), "better")
  t.eq((comparison.verdict(100, 103, "higher", { noise_pct = 5 })), "within noise", "--noise widens the band")
  local v, pct, basis = comparison.verdict(100, 94, "higher", { base_interval = { 90, 110 }, interval = { 88, 99 } })
  t.eq(v, "within noise")
  t.near(pct, -6, 1e-9)
  t.eq(basis, "the intervals overlap")
  t.eq((comparison.verdict(100, 101, "higher", { base_interval = { 99, 100.5 }, interval = { 100.8, 101.2 } })), "better",
    "intervals apart: a difference inside the band still counts")
  t.eq((comparison.verdict(0, 0, "lower")), "within noise", "0 failed against 0 failed")
  local none, d = comparison.verdict(500, 400, nil)
  t.eq(none, nil, "power has no better direction")
  t.near(d, -20, 1e-9)
  t.eq(comparison.text("worse", -6), "-6.0 %, worse")
  t.eq(comparison.text(nil, nil), "—")
end)

t.test("run_comparison: two runs, each figure with both values, the difference and a verdict", function()
  local cmp = rc.build({ run("a", doc()), run("b", doc{ id = "bbbb2222", tps = 900, ttft = 60, gpu = "NVIDIA H100 80GB HBM3", size = "gpu-h100x1-80gb", price = 3.39 }) })
  t.eq(cmp.error, nil)
  t.eq(cmp.baseline, "a")
  t.eq(#cmp.loads, 2)
  local r = row(cmp, "concurrent_32", "output_tokens_per_second")
  t.eq(r.values.a, 32000)
  t.eq(r.verdicts.b.verdict, "worse")
  t.near(r.verdicts.b.difference_pct, -10, 1e-9)
  t.eq(row(cmp, "concurrent_32", "ttft_p50_ms").verdicts.b.verdict, "worse", "a higher TTFT is worse")
  t.eq(row(cmp, "concurrent_32", "failed_requests").verdicts.b.verdict, "within noise")
  t.eq(row(cmp, "concurrent_32", "mean_power_w").verdicts.b.verdict, nil)
  t.eq(cmp.summary[1].worse > 0, true)
  -- manifest differences: the GPU and the size, not the run id in names and container names
  local fields = {}
  for _, d in ipairs(cmp.manifest_differences) do fields[d.field] = d.values end
  t.eq(fields["machines.1.gpu"].b, "NVIDIA H100 80GB HBM3")
  t.eq(fields["params.size"].a, "gpu-mi300x1-192gb")
  t.eq(fields["serving.1.command"], nil, "the run id in the container name is not a difference")
  t.eq(fields["runara.run_id"], nil)
  local json = rc.json(cmp)
  t.eq(json.format, "runara-compare/1")
  t.match(json.verdict_rule, "±2 %%")
end)

t.test("run_comparison: a run against itself is within noise everywhere", function()
  local d = doc()
  local cmp = rc.build({ run("a", d), run("a", d) })
  t.eq(cmp.runs[2].label, "a (2)")
  t.eq(cmp.summary[1].better, 0)
  t.eq(cmp.summary[1].worse, 0)
  t.eq(cmp.summary[1].within_noise > 10, true)
  t.eq(#cmp.manifest_differences, 0)
end)

t.test("run_comparison: intervals from repeats decide where both runs have them", function()
  local cmp = rc.build({ run("a", doc{ intervals = true }), run("b", doc{ id = "b", tps = 950, intervals = true }) })
  local r = row(cmp, "concurrent_32", "output_tokens_per_second")
  t.eq(r.verdicts.b.verdict, "within noise", "-5 % but the intervals overlap")
  t.eq(r.verdicts.b.basis, "the intervals overlap")
  t.match(rc.rule(cmp), "intervals do not overlap")
end)

t.test("run_comparison: thresholds, in the direction of better", function()
  local runs = { run("a", doc()), run("b", doc{ id = "b", tps = 900 }) }
  local cmp = rc.build(runs, { thresholds = { "output_tokens_per_second=-5", "ttft_p50_ms=-5", "output_throughput=-20" } })
  t.eq(#cmp.thresholds[1].crossed, 2, "worse by 10 % at both loads")
  t.eq(#cmp.thresholds[2].crossed, 0, "TTFT unchanged")
  t.eq(#cmp.thresholds[3].crossed, 0, "the field name is accepted too")
  t.eq(cmp.crossed, 2)
  t.eq(#rc.build(runs, { thresholds = { "output_tokens_per_second=5" } }).thresholds[1].crossed, 2, "+5: at least 5 % better asked")
  t.raises(function() rc.build(runs, { thresholds = { "output_tokens_per_secnd=-5" } }) end, "did you mean 'output_tokens_per_second'")
  t.raises(function() rc.build(runs, { thresholds = { "mean_power_w=-5" } }) end, "no better direction")
end)

t.test("run_comparison: damaged, older and unrelated runs: what can be compared, or why not", function()
  local cmp = rc.build({ run("a", doc()), { label = "broken", dir = "/runs/broken", problem = "results.json is damaged: not valid JSON" } })
  t.eq(cmp.error, "only one run could be compared (a); a comparison needs two")
  t.eq(cmp.skipped[1].problem, "results.json is damaged: not valid JSON")
  cmp = rc.build({ run("old", { benchmarks = { throughput = { tokens_per_second = 900 } } }), run("a", doc()) })
  t.eq(cmp.error, nil)
  t.eq(cmp.note, "the runs share no load (by name); only their headline figures are compared")
  t.eq(row(cmp, nil, "single_stream_tokens_per_second").verdicts.a.verdict, "better")
  cmp = rc.build({ run("x", { benchmarks = { loads = { other = { output_throughput = 5 } } } }), run("a", doc()) })
  t.match(cmp.error, "no figure in common")
  cmp = rc.build({ run("plain", { answer = 42, run = {} }), run("a", doc()) })
  t.match(cmp.skipped[1].problem, "no figures this comparison knows")
  cmp = rc.build({ run("weird", { benchmarks = "not a table", manifest = 7 }), run("a", doc()) })
  t.truthy(cmp.error, "a results.json of another shape is reported, not a crash")
  local md = render.markdown(cmp)
  t.match(md, "NOTHING COMPARED")
  t.match(render.html(cmp, svg), "NOTHING COMPARED")
end)

t.test("run_comparison: a report of several machines is a run per machine", function()
  local two = { benchmarks = { machines = { mi300x = { throughput = { tokens_per_second = 1000 } }, h100 = { throughput = { tokens_per_second = 900 } } },
                               loads = { ["MI300X concurrent_32"] = { max_concurrency = 32, output_throughput = 32000 },
                                         ["H100 concurrent_32"] = { max_concurrency = 32, output_throughput = 30000 } } },
                machines = { mi300x = { label = "MI300X", gpu = "AMD Instinct MI300X" }, h100 = { label = "H100", gpu = "NVIDIA H100" } },
                comparison = { machines = { "mi300x", "h100" } } }
  local cmp = rc.build({ run("a", doc()), run("both", two) })
  t.eq(#cmp.runs, 3)
  t.eq(cmp.runs[2].label, "both MI300X")
  t.eq(row(cmp, "concurrent_32", "output_tokens_per_second").values["both H100"], 30000)
  t.eq(row(cmp, "concurrent_32", "output_tokens_per_second").verdicts["both MI300X"].verdict, "within noise")
end)

t.test("run_comparison_render: the reports' tables, charts per run, hostile text inert", function()
  local evil = doc{ id = "b", tps = 900, gpu = "<img src=x onerror=alert(1)>|[x](javascript:1)" }
  local cmp = rc.build({ run("a", doc{ simulated = true }), run("b", evil) }, { thresholds = { "output_tokens_per_second=-5" } })
  local md = render.markdown(cmp)
  t.match(md, "| Metric | a %(baseline%) | b | b vs a | Notes |")
  t.match(md, "| output tok/s | 32000 | 28800 | %-10%.0 %%, worse | higher is better |")
  t.match(md, "THRESHOLDS CROSSED: 2")
  t.match(md, "SIMULATED: a ran on the simulated cloud")
  t.no_match(md, "<img")
  t.no_match(md, "%[x%]%(")
  local html = render.html(cmp, svg)
  t.match(html, '<table id="load%-concurrent_32">')
  t.match(html, 'data%-series="a"')
  t.match(html, 'data%-series="b"')
  t.match(html, '<td class="worse">%-10%.0 %%, worse</td>')
  t.no_match(html, "<img")
  t.no_match(html, "<script")
end)

t.test("workloads: simulated vs real, profile, a load's prompt set and output length differ; the same workload does not", function()
  local sets = function(h) return { concurrent_1 = { sha256 = h }, concurrent_32 = { sha256 = h } } end
  local a = doc{ simulated = true, profile = "quick", prompt_sets = sets("aaaa00000000ffff"), max_tokens = { concurrent_32 = 128 } }
  local b = doc{ id = "bbbb2222", profile = "full", prompt_sets = sets("bbbb00000000ffff"), max_tokens = { concurrent_32 = 512 } }
  local cmp = rc.build({ run("a", a), run("b", b) })
  local what = {}
  for _, d in ipairs(cmp.workload_differences) do what[d.what] = d.baseline .. " vs " .. d.value end
  t.eq(what["simulated or real"], "simulated vs real")
  t.eq(what["profile"], "quick vs full")
  t.eq(what["prompt set of concurrent_32"], "aaaa00000000 vs bbbb00000000")
  t.eq(what["output length (max_tokens) of concurrent_32"], "128 vs 512")
  t.match(cmp.workload_line, "^simulated or real: simulated %(a%) vs real %(b%); profile: quick %(a%) vs full %(b%); prompt set")
  t.eq(rc.json(cmp).workload_differences[1].what, "simulated or real")
  -- Allowed, the comparison is made and marked loudly.
  local allowed = rc.build({ run("a", a), run("b", b) }, { allow_different_workloads = true })
  local md = render.markdown(allowed)
  t.match(md, "WORKLOADS DIFFER %(compared anyway: %-%-allow%-different%-workloads%)")
  t.match(md, "%(DIFFERENT WORKLOADS%)")
  t.match(render.html(allowed, svg), "WORKLOADS DIFFER")
  -- The same workload (a fact one run does not state is no difference).
  local same = rc.build({ run("a", doc{ prompt_sets = sets("cccc") }), run("b", doc{ id = "bbbb2222", prompt_sets = sets("cccc"), profile = "full" }) })
  t.eq(#same.workload_differences, 0)
  t.eq(same.workload_line, nil)
  t.no_match(render.markdown(same), "WORKLOADS DIFFER")
end)

t.test("workloads: an open loop's TTFT from the send (new runs) and from the schedule (older runs) differ", function()
  local function open_loop(d, from_schedule)
    for _, l in pairs(d.benchmarks.loads) do
      l.load_model, l.request_rate, l.mean_ttft_from_schedule_ms = "open", 20, from_schedule
    end
    return d
  end
  local old = open_loop(doc(), nil)
  local new = open_loop(doc{ id = "bbbb2222" }, 61.5)
  local cmp = rc.build({ run("old", old), run("new", new) })
  local what = {}
  for _, d in ipairs(cmp.workload_differences) do what[d.what] = d.baseline .. " vs " .. d.value end
  t.eq(what["TTFT origin of concurrent_32"], "schedule vs send")
  t.eq(what["TTFT origin of concurrent_1"], "schedule vs send")
  t.match(cmp.workload_line, "TTFT origin of concurrent_1, concurrent_32: schedule %(old%) vs send %(new%)")
  t.eq(cmp.different_workloads_allowed, false, "runara compare refuses it without --allow-different-workloads")
  local allowed = rc.build({ run("old", old), run("new", new) }, { allow_different_workloads = true })
  t.match(render.markdown(allowed), "WORKLOADS DIFFER")
  -- Two new runs, and closed loops (send and schedule one moment), are the same workload.
  t.eq(#rc.build({ run("a", open_loop(doc(), 60)), run("b", new) }).workload_differences, 0)
  t.eq(#rc.build({ run("a", doc()), run("b", doc{ id = "bbbb2222" }) }).workload_differences, 0)
end)

t.test("goodput and failure rate are compared like the other metrics; a goodput drop is worse", function()
  local cmp = rc.build({ run("a", doc{ goodput = 10, completed = 100 }), run("b", doc{ id = "bbbb2222", goodput = 5.3, completed = 95, failed = 5 }) },
    { thresholds = { "goodput=-5" } })
  local g = row(cmp, "concurrent_32", "goodput")
  t.truthy(g, "a goodput row")
  t.eq(g.verdicts.b.verdict, "worse")
  t.near(g.verdicts.b.difference_pct, -47, 1e-9)
  local f = row(cmp, "concurrent_32", "failure_rate")
  t.truthy(f, "a failure rate row")
  t.eq(f.values.a, 0)
  t.near(f.values.b, 0.05, 1e-12)
  t.eq(f.verdicts.b.verdict, "worse", "from no failure to 5 %: worse (in percentage points, where a relative change has no meaning)")
  t.near(f.verdicts.b.difference_pct, 5, 1e-9)
  t.eq(cmp.crossed, 2, "goodput=-5 crossed at both loads")
  t.match(render.markdown(cmp), "goodput %(requests/s within SLOs%)")
end)

t.done()
