-- Energy you can trust, end to end: gpu_metrics samples a GPU whose energy counter stays at 0 J
-- while it draws 600 W (fixtures/gpu-stuck-counter/amd-smi, put first on PATH by ctest), an
-- http_load against the fake LLM server measures a load's energy, and runara.report shows it.
-- The counter is not believed: every energy figure is the integrated power, never 0 J, and says
-- where it came from and why.
local t = require("t")
local report = require("runara.report")

local host = gpu_metrics.localhost()
local ok, snap = pcall(gpu_metrics.read, host)
if not ok or snap.backend ~= "amd-smi" then
  error("test_energy.lua needs the stand-in amd-smi of tests/lua/fixtures/gpu-stuck-counter/ first on PATH " ..
        "(ctest puts it there): " .. tostring(ok and snap.backend or snap), 0)
end

local sampler = gpu_metrics.start(host, { interval = 0.1 })
runara.sleep(0.4)
local server = http_load.fake_server{ ttft_ms = 5, itl_ms = 10, output_tokens = 16 }
local load = http_load.run{ name = "stuck", url = server.url, model = server.model, concurrency = 2, requests = 16,
                            max_tokens = 16, gpu = sampler, quiet = true }
runara.sleep(0.3)
local g = sampler:stop()

t.test("the sampler: a counter stuck at 0 J gives the integrated 600 W, and the note says why", function()
  local gpu = g.summary.gpus[1]
  t.eq(gpu.energy_source, "trapezoid")
  t.eq(gpu.counter_energy_j, 0, "what the counter advanced")
  local first, last = g.samples[1].t_s, g.samples[#g.samples].t_s
  t.near(gpu.energy_j, 600 * (last - first), 1e-6 * 600 * (last - first), "600 W over the sampled span")
  t.eq(gpu.energy_j, gpu.integrated_energy_j)
  t.match(gpu.energy_note, "^power samples integrated %(trapezoids%): the energy counter did not advance while the power samples integrate to %d+ J %(a stuck or lagging counter%)$")
  t.eq(g.summary.energy_source, "trapezoid")
  t.eq(g.summary.energy_note, gpu.energy_note)
end)

t.test("the load: its energy over its own window, the source and the reason, tokens per joule", function()
  t.truthy(load.energy_j > 0, "energy_j is " .. tostring(load.energy_j))
  t.near(load.mean_power_w, 600, 1e-9, "the load's mean power is the 600 W drawn")
  t.eq(load.energy_source, "trapezoid")
  t.match(load.energy_note, "the energy counter did not advance")
  t.near(load.output_tokens_per_joule, load.total_output_tokens / load.energy_j, 1e-12)
end)

t.test("the report: integrated energy named as the source in every table, the reason beside it", function()
  local rep = report.new{ title = "stuck counter" }
  rep:metadata{ gpu_count = 1, hourly_usd = 1.99 }
  rep:add_load("stuck", load, { kind = "concurrent", concurrency = 2 })
  rep:add_gpu(g)
  local doc = rep:document()
  local l = doc.benchmarks.loads.stuck
  t.eq(l.energy_source, "trapezoid")
  t.near(l.output_tokens_per_joule, load.total_output_tokens / load.energy_j, 1e-12)
  t.near(l.total_tokens_per_joule, (load.total_output_tokens + load.total_input_tokens) / load.energy_j, 1e-12)
  t.eq(doc.benchmarks.power.energy_source, "trapezoid")
  t.eq(doc.benchmarks.efficiency.energy_source, "trapezoid")
  local md = rep:render().md
  t.match(md, "| 0 | 600 | 600 | %d+ | integrated power | 172%.8 GiB |", "the GPU table")
  t.match(md, "| stuck | %$[%d%.]+ | .- | integrated power |", "the efficiency table")
  t.match(md, "Energy of stuck: power samples integrated %(trapezoids%): the energy counter did not advance while the power samples integrate to %d+ J")
  t.match(md, "Energy, whole sampling: power samples integrated")
  t.no_match(md, "| 0 J", "never 0 J")
end)

t.done()
