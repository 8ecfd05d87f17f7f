-- gemm.lua — raw GEMM throughput of one GPU, SemiAnalysis's method (warm-up 30, 200 repetitions,
-- median; the Llama-70B training shapes; FP16 and BF16), run with PyTorch in the GPU vendor's
-- container; a TFLOPS table compared with SemiAnalysis's published figures.
--
-- What it measures: TFLOPS per (shape, dtype), GPU power while it runs. Prints and reports the
-- best TFLOPS per dtype as its headline. Writes results.json, report.md/report.html (the table),
-- gemm.jsonl (the benchmark's raw lines, one per shape and dtype; not echoed to the terminal).
-- What it costs: gpu-mi300x1-192gb at $1.99/h; about 15 minutes including the container pull
-- (about $0.50). Rehearse it for free: runara --sim scripts/gemm.lua
-- Elsewhere: runara --on root@HOST scripts/gemm.lua (a machine of yours).
-- Params: runara scripts/gemm.lua --help (an H100: size=gpu-h100x1-80gb; its image and region follow the size)
local scenario = require("runara.scenario")
local defaults = require("runara.droplet_defaults")
local gemm = require("runara.gemm")
local containers = require("runara.container")

scenario.run({
  about = "GEMM TFLOPS (SemiAnalysis's method: warm-up, repetitions, median; Llama-70B shapes) with PyTorch\n" ..
          "in the GPU vendor's container, compared with SemiAnalysis's published figures.",
  title = function(_, where) return "GEMM TFLOPS on " .. where end,
  needs_machine = true,
  params = {
    { name = "size", default = "gpu-mi300x1-192gb", help = "droplet size" },
    defaults.image_param(),
    defaults.region_param(),
    { name = "container", default = function() return nil end, default_help = "the vendor's PyTorch image",
      help = "the container image the benchmark runs in" },
    { name = "warmup", type = "integer", default = 30, min = 0, help = "untimed repetitions first" },
    { name = "reps", type = "integer", default = 200, min = 1, help = "timed repetitions (the median is reported)" },
    { name = "dtypes", default = "fp16,bf16", help = "comma-separated: fp16, bf16, fp32" },
  },
}, function(sc)
  local P, rep = sc.params, sc.report
  for dtype in P.dtypes:gmatch("[^,]+") do
    if dtype ~= "fp16" and dtype ~= "bf16" and dtype ~= "fp32" then
      runara.usage_error("param dtypes=" .. P.dtypes .. ": '" .. dtype .. "' is not one of fp16, bf16, fp32")
    end
  end
  rep:metadata{ size = scenario.where() == "droplet" and P.size or nil,
                method = "SemiAnalysis's GEMM method: warm-up " .. P.warmup .. ", " .. P.reps .. " repetitions, median, Llama-70B shapes" }
  rep:phase("boot")
  local m = sc:machine{ name = "gemm", size = P.size, image = P.image, region = P.region }
  local s = m.session
  -- The vendor's PyTorch container and device flags (runara.container), by the machine's GPU tool.
  local vendor = containers.vendor(s)
  local container = P.container or containers.image(vendor, "pytorch")
  -- A new folder of this run's own (never a ~/gemm the machine's user may have), removed at the end.
  local dir = sc:workdir(m, "gemm")
  s:upload("gemm/gemm_bench.py", dir .. "/gemm_bench.py")
  rep:phase("gemm")
  runara.log("gemm: running " .. P.dtypes .. " over the Llama-70B shapes (its raw lines go to gemm.jsonl and ssh/" .. s.name .. ".log)")
  local r = s:exec(containers.command{ vendor = vendor, purpose = "pytorch", image = container,
    name = "runara-gemm-" .. runara.run_id, mounts = { dir .. ":/workspace" },
    command = string.format("python3 /workspace/gemm_bench.py --warmup %d --reps %d --dtypes %s",
      P.warmup, P.reps, P.dtypes) }, { timeout = 3600, quiet = true })
  rep:phase("done")
  if m.gpu then
    rep:add_gpu(m.gpu:stop())
    rep.gpu_sampler = nil
  end
  local results, rows = gemm.parse(r.stdout)
  if #results == 0 then error("gemm: the benchmark printed no result; its output ended with:\n" .. r.stdout:sub(-2000), 0) end
  runara.write_file("gemm.jsonl", r.stdout)
  rep:add_file("gemm.jsonl", "the benchmark's output: one JSON line per shape and dtype")
  local ref = require("runara.reference_numbers").gemm
  rep:add_table("GEMM", { columns = { "shape (M, N, K)", "what", "dtype", "median (ms)", "TFLOPS" }, rows = rows,
    caption = "SemiAnalysis BF16 reference (" .. ref.source .. "): MI300X ~" .. ref.bf16_tflops.mi300x .. ", H100 ~" .. ref.bf16_tflops.h100 .. " TFLOPS" })
  local peaks = gemm.peaks(results)
  rep:set("benchmarks.gemm", { results = results, peak_tflops = peaks, container = container })
  -- The headline: the best TFLOPS of each dtype (one GPU), beside SemiAnalysis's BF16 figure.
  for dtype in P.dtypes:gmatch("[^,]+") do
    if peaks[dtype] then
      rep:headline("best " .. dtype:upper() .. " GEMM (one GPU)", peaks[dtype], "TFLOPS", { digits = 0,
        note = dtype == "bf16" and ("SemiAnalysis BF16: MI300X ~" .. ref.bf16_tflops.mi300x .. ", H100 ~" .. ref.bf16_tflops.h100) or nil })
    end
  end
end)
