-- runara.report's cost and efficiency figures against a hand computation (the numbers below were
-- worked out separately, not with the module's formulas), tokens per joule, the energy source
-- notes, the machines' cost labelled with the moment it was read, and the units (GiB) everywhere.
--
-- The inputs (fixtures/report_results.lua): price $1.99/h, the droplet billed $0.0211 so far;
-- the seed 000 suite's four loads, each 10.1 s long with 128 output and 256 input tokens per
-- request: throughput 2 requests, ttft 5, concurrent_10 20, concurrent_32 64 (8192 output and
-- 16384 input tokens, 816 tok/s, median TPOT 38.52 ms, 5883 J).
local t = require("t")
local report = require("runara.report")
local efficiency = require("runara.report_efficiency")
local fx = require("fixtures.report_results")

local function single(over)
  over = over or {}
  local rep = report.new{ title = "efficiency", simulated = true }
  rep:metadata{ gpu = "AMD Instinct MI300X", gpu_count = over.gpu_count or 1, gpu_vram_gib = 192, hourly_usd = over.hourly_usd or 1.99,
                size = "gpu-mi300x1-192gb" }
  if over.bill ~= false then rep:bill(fx.droplet(0.0211)) end
  for _, l in ipairs(fx.suite_loads()) do rep:add_load(l[1], l[2], l[3]) end
  rep:add_gpu(over.gpu or fx.gpu())
  return rep
end

t.test("each load's cost per million tokens, steady-state and all-in, against a hand computation", function()
  local doc = single():document()
  local c32 = doc.benchmarks.loads.concurrent_32
  -- steady: $1.99/h × 10.1 s / 3600 = $0.00558305556; over 8192 output tokens and 24576 in all.
  t.near(c32.cost_usd_steady, 0.0055830555555556, 1e-12, "the load's own cost")
  t.near(c32.usd_per_million_output_tokens, 0.68152533637153, 1e-9)
  t.near(c32.usd_per_million_total_tokens, 0.22717511212384, 1e-9)
  -- all-in: the $0.0211 the machine cost so far, shared by four loads of equal duration: $0.005275 each.
  t.near(c32.cost_usd_all_in, 0.005275, 1e-12)
  t.near(c32.usd_per_million_output_tokens_all_in, 0.6439208984375, 1e-9)
  t.near(c32.usd_per_million_total_tokens_all_in, 0.21464029947917, 1e-9)
  -- the shares add up to the whole cost
  local sum = 0
  for _, name in ipairs({ "throughput", "ttft", "concurrent_10", "concurrent_32" }) do sum = sum + doc.benchmarks.loads[name].cost_usd_all_in end
  t.near(sum, 0.0211, 1e-12)
  -- per GPU, interactivity (1000 / 38.52 ms), tokens per joule (8192 / 5883 J, 24576 / 5883 J)
  t.near(c32.output_tokens_per_s_per_gpu, 816, 1e-9)
  t.near(c32.interactivity_tokens_per_s_per_user, 25.960539979232, 1e-9)
  t.near(c32.output_tokens_per_joule, 1.3924868264491, 1e-9)
  t.near(c32.total_tokens_per_joule, 4.1774604793473, 1e-9)
  -- eight GPUs: per GPU is an eighth
  t.near(single({ gpu_count = 8 }):document().benchmarks.loads.concurrent_32.output_tokens_per_s_per_gpu, 102, 1e-9)
end)

t.test("cost at a goodput SLO: the steady cost over the output of the requests that met it", function()
  -- 64 requests at 6.3366 req/s, 48 of them good (4.7525 good req/s): $0.0055830556 over
  -- 8192 × 48/64 = 6144 good output tokens = $0.9087004 per million; no SLO, no figure.
  local f = efficiency.load_figures({ duration = 10.1, total_output_tokens = 8192, total_input_tokens = 16384,
    request_throughput = 64 / 10.1, request_goodput = 48 / 10.1, output_throughput = 8192 / 10.1 }, { hourly_usd = 1.99 })
  t.near(f.usd_per_million_good_output_tokens, 0.0055830555555556 / 6144 * 1e6, 1e-9)
  t.near(f.usd_per_million_good_output_tokens, 0.9087004485, 1e-9)
  local none = efficiency.load_figures({ duration = 10.1, total_output_tokens = 8192, request_throughput = 6.3 }, { hourly_usd = 1.99 })
  t.eq(none.usd_per_million_good_output_tokens, nil)
  local no_good = efficiency.load_figures({ duration = 10.1, total_output_tokens = 8192, request_throughput = 6.3, request_goodput = 0 },
    { hourly_usd = 1.99 })
  t.eq(no_good.usd_per_million_good_output_tokens, nil)  -- nothing good: no finite cost
end)

t.test("the headline: the best load's figures and the whole run all-in", function()
  local doc = single():document()
  local e = doc.benchmarks.efficiency
  t.eq(e.load, "concurrent_32", "the highest output throughput (816 tok/s)")
  t.near(e.usd_per_million_output_tokens, 0.68152533637153, 1e-9)
  t.near(e.output_tokens_per_joule, 1.3924868264491, 1e-9)
  t.eq(e.price_usd_per_hour, 1.99)
  -- all-in: $0.0211 over 128 × 91 = 11648 output tokens, 384 × 91 = 34944 in all.
  t.eq(e.all_in.output_tokens, 11648)
  t.eq(e.all_in.total_tokens, 34944)
  t.near(e.all_in.usd_per_million_output_tokens, 1.8114697802198, 1e-9)
  t.near(e.all_in.usd_per_million_total_tokens, 0.60382326007326, 1e-9)
  t.eq(e.all_in.cost_usd, doc.metadata.cost_usd, "one reading of the cost for every figure")
  local r = single():render()
  t.match(r.html, '<div class="v">0%.68 <small>USD</small></div><div class="l">per million output tokens, steady%-state, at concurrent_32</div>')
  t.match(r.html, '<div class="v">1%.81 <small>USD</small></div><div class="l">per million output tokens, all%-in %(whole run%)</div>')
  t.match(r.html, '<div class="v">1%.392 <small>tok/J</small></div><div class="l">output tokens per joule, at concurrent_32</div>')
  t.match(r.md, "\n## Cost and efficiency\n")
  t.match(r.md, "| concurrent_32 | %$0%.68 | %$0%.23 | %$0%.64 | %$0%.21 | 816 | 26%.0 | 1%.392 | counter |")
  t.match(r.md, "Cost and efficiency at concurrent_32 %(the highest output throughput%): %$0%.68 per million output tokens")
  t.match(r.html, '<table id="efficiency">')
  local s = single():summary()
  t.match(s, "USD/M output, steady%s+0%.68 USD")
  t.match(s, "USD/M output, all%-in%s+1%.81 USD")
  t.match(s, "output tokens/J%s+1%.392 tok/J")
end)

t.test("no price (a machine of yours) gives no cost figure, and says why; tokens/J stay", function()
  local rep = report.new{ title = "mine" }
  rep:metadata{ gpu_count = 1 }
  for _, l in ipairs(fx.suite_loads()) do rep:add_load(l[1], l[2], l[3]) end
  local doc = rep:document()
  local c32 = doc.benchmarks.loads.concurrent_32
  t.eq(c32.usd_per_million_output_tokens, nil)
  t.eq(c32.usd_per_million_output_tokens_all_in, nil)
  t.near(c32.output_tokens_per_joule, 1.3924868264491, 1e-9)
  t.match(doc.benchmarks.efficiency.cost_note, "^no hourly price for this machine")
  t.eq(doc.benchmarks.efficiency.all_in, nil)
end)

t.test("efficiency functions: nothing to stand on gives nothing, never 0 or NaN", function()
  local f = efficiency.load_figures({ duration = 0, total_output_tokens = 0, median_tpot_ms = 0, energy_j = 0 }, { hourly_usd = 1.99, gpu_count = 0 })
  t.eq(next(f), nil)
  local shares = efficiency.shares({ { duration = 10 }, { duration = 30 }, { duration = 0 / 0 } }, 4)
  t.eq(shares[1], 1)
  t.eq(shares[2], 3)
  t.eq(shares[3], nil)
  t.eq(efficiency.headline({}, {}), nil)
end)

t.test("a stuck energy counter: the integrated figure, its source in every table, and why", function()
  -- What gpu_metrics gives when the counter stayed at 0 J (tests/unit/test_gpu_summary.cpp checks the choice itself).
  local note = "power samples integrated (trapezoids): the energy counter did not advance while the power samples integrate to 14597 J (a stuck or lagging counter)"
  local g = fx.gpu()
  g.summary.energy_source, g.summary.energy_note = "trapezoid", note
  g.summary.gpus[1].energy_source, g.summary.gpus[1].energy_note, g.summary.gpus[1].counter_energy_j = "trapezoid", note, 0
  local rep = report.new{ title = "stuck" }
  rep:metadata{ gpu_count = 1, hourly_usd = 1.99 }
  rep:add_load("concurrent_32", fx.load("concurrent_32", 32, 64, { energy_source = "trapezoid",
    energy_note = "power samples integrated (trapezoids): the energy counter did not advance while the power samples integrate to 5883 J (a stuck or lagging counter)" }),
    { kind = "concurrent", concurrency = 32 })
  rep:add_gpu(g)
  local doc = rep:document()
  t.eq(doc.benchmarks.power.energy_source, "trapezoid")
  t.eq(doc.benchmarks.power.energy_note, note)
  t.eq(doc.benchmarks.loads.concurrent_32.energy_source, "trapezoid")
  t.eq(doc.benchmarks.efficiency.energy_source, "trapezoid")
  local r = rep:render()
  t.match(r.md, "| 0 | 500 | 610 | 14597 | integrated power | 172%.8 GiB |", "the GPU table names the source")
  t.match(r.md, "| concurrent_32 | %$0%.68 | .- | 1%.392 | integrated power |", "so does the efficiency table")
  t.match(r.md, "Energy of concurrent_32: power samples integrated %(trapezoids%): the energy counter did not advance while the power samples integrate to 5883 J")
  t.match(r.md, "Energy, whole sampling: power samples integrated %(trapezoids%): the energy counter did not advance")
  t.match(r.html, "output tokens/J %(energy from the power samples integrated%)")
  -- A counter that agreed is named as the source, with no note about the load.
  local ok = single():render()
  t.no_match(ok.md, "Energy of concurrent_32")
end)

t.test("units: memory in GiB everywhere the reports show it, both units in results.json, each labelled", function()
  local rep = single()
  rep:metadata{ gpu_vram_gib = 192 }
  local doc = rep:document()
  -- 185.5e9 bytes = 185.5 GB = 172.76 GiB
  t.eq(doc.benchmarks.memory.vram_peak_gb, 185.5)
  t.eq(doc.benchmarks.memory.vram_peak_gib, 172.8)
  t.eq(doc.benchmarks.memory.vram_used_gib, 172.8)
  t.match(doc.report.units.memory, "^GiB %(2%^30 bytes%)")
  local r = rep:render()
  t.match(r.md, "192 GiB each")
  t.no_match(r.md, "%d GB each")
  t.match(r.md, "| 172%.8 GiB |")
  t.no_match(r.md, "%d GB |", "no memory figure in 10^9 bytes in a table")
  t.match(r.html, '<div class="v">173 <small>GiB</small></div><div class="l">peak VRAM</div>')
  t.match(r.html, 'VRAM used')
  t.match(r.html, '>GiB</text>', "the VRAM chart's axis")
  -- A metadata size in GB (10^9 bytes) alone is converted, not shown in another unit.
  local gb = report.new{ title = "gb" }
  gb:metadata{ gpu = "X", gpu_vram_gb = 206.1 }
  t.match(gb:render().md, "X · 191%.9 GiB each", "206.1 × 10^9 bytes")
end)

t.test("the machines' cost says when it was read: before teardown, the final bill being in run.log", function()
  local doc = single():document()
  t.eq(doc.metadata.cost_usd, 0.0211)
  t.truthy(type(doc.metadata.cost_read_at_s) == "number" and doc.metadata.cost_read_at_s >= 0, "the moment it was read")
  t.match(doc.metadata.cost_note, "before teardown")
  local md = single():render().md
  t.match(md, "Machine cost: %$0%.0211 %(%$1%.99/h%) so far, read %d+%.%d s into the run as this report was written, before teardown %(the final bill, a few seconds more, is in run%.log and results%.json's run%.total_cost_usd%)")
end)

t.test("a comparison: each machine's all-in cost per million tokens, per-GPU throughput, interactivity, GiB", function()
  local rep = report.new{ title = "cmp" }
  local sides = { { "mi300x", "MI300X", 0.0211, 1.99, 1 }, { "h100", "H100", 0.0359, 3.39, 0.9 } }
  for _, s in ipairs(sides) do
    local view = rep:machine(s[1], { label = s[2] })
    view:bill(fx.droplet(s[3], s[1]))
    view:metadata{ hourly_usd = s[4], gpu_count = 1 }
    for _, l in ipairs(fx.suite_loads(s[5])) do view:add_load(l[1], l[2], l[3]) end
    view:add_gpu(fx.gpu())
  end
  local doc = rep:document()
  local m = doc.benchmarks.machines
  t.near(m.mi300x.efficiency.all_in.usd_per_million_output_tokens, 1.8114697802198, 1e-9)
  t.near(m.h100.efficiency.all_in.usd_per_million_output_tokens, 0.0359 / 11648 * 1e6, 1e-9)
  t.eq(doc.benchmarks.loads["MI300X concurrent_32"].output_tokens_per_s_per_gpu, 816)
  t.truthy(doc.comparison.metrics.all_in_usd_per_mtok, "all-in in the comparison")
  t.truthy(doc.comparison.metrics.concurrent_32_interactivity, "interactivity in the comparison")
  t.truthy(doc.comparison.metrics.vram_peak_gib, "peak VRAM in GiB in the comparison")
  local md = rep:render().md
  t.match(md, "| peak VRAM %(GiB%) | 173 | 173 |")
  t.match(md, "MI300X — Cost and efficiency at concurrent_32")
  t.match(md, "| MI300X | concurrent_32 | %$0%.68 |")
end)

t.done()
