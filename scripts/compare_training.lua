-- compare_training.lua — the training benchmarks of the published "AMD MI350X Training Benchmark Results" (training/train_bench.py, as
-- scripts/training.lua runs them) on an AMD MI300X and an NVIDIA H100 droplet at the same time,
-- one comparison report.
--
-- What it measures: on each machine, in the vendor's PyTorch container: square matmul TFLOPS, the
-- 3-layer MLP loop, GPT-style training at the chosen sizes (tokens/s, model TFLOPS, MFU against
-- each GPU's own peak, memory), GPU power and VRAM; then the two side by side with the ratio
-- MI300X / H100 and that report's MI350X figure. A size that does not fit one GPU is reported skipped
-- on that side with the memory it needed. When one machine fails, the report says so and keeps
-- the other's results (PARTIAL; the run exits 1).
-- What it costs: gpu-mi300x1-192gb ($1.99/h) + gpu-h100x1-80gb ($3.39/h), about 30 minutes with
-- the container pulls (about $3). Rehearse it for free: runara --sim scripts/compare_training.lua
-- Params: runara scripts/compare_training.lua --help
local scenario = require("runara.scenario")
local training = require("runara.training")
local containers = require("runara.container")
local seed = require("runara.reference_numbers").training_seed001

local P, rep

local function f0(x) return type(x) == "number" and string.format("%.0f", x) or "—" end
local function f1(x) return type(x) == "number" and string.format("%.1f", x) or "—" end
local function pct(x) return type(x) == "number" and string.format("%.1f %%", 100 * x) or "—" end
local function ratio(a, b) return type(a) == "number" and type(b) == "number" and b > 0 and string.format("%.2f×", a / b) or "—" end

-- One side: its machine, train_bench.py in its vendor's container, the parsed lines kept in
-- side.results. An error ends this side only (kept as its failure in the report).
local function measure(sc, side)
  local view = rep:machine(side.key, { label = side.label })
  return view:run(function()
    view:metadata{ size = side.size, region = side.region }
    local m = sc:machine{ name = side.key, size = side.size, image = side.image, region = side.region, report = view,
                          gpu_interval = P.gpu_interval }
    local s = m.session
    local vendor = containers.vendor(s)
    local dir = sc:workdir(m, "training")  -- this run's own, removed at the end
    s:upload("training/train_bench.py", dir .. "/train_bench.py")
    view:phase("training")
    local r = s:exec(containers.command{ vendor = vendor, purpose = "pytorch", ipc = "host", shm_size = "16g",
      name = "runara-train-" .. side.key .. "-" .. runara.run_id, mounts = { dir .. ":/workspace" },
      command = string.format("python3 /workspace/train_bench.py --parts %s --sizes %s --warmup-steps %d --steps %d%s",
        P.parts, P.sizes, P.warmup, P.steps, P.quick and " --quick" or "") }, { timeout = 7200, check = false })
    runara.write_file("train_bench-" .. side.key .. ".jsonl", r.stdout)
    view:add_file("train_bench-" .. side.key .. ".jsonl", side.label .. ": the benchmark's output, one JSON line per measurement")
    side.results = training.parse(r.stdout)
    view:phase("done")
    view:add_gpu(view.gpu_sampler:stop())
    view.gpu_sampler = nil
    if r.code ~= 0 then
      local why = training.failure_cause(r.stderr)
      error(string.format("training on %s failed (exit %s): %s", side.label, tostring(r.code), why.cause), 0)
    end
    if not side.results.env then error("training on " .. side.label .. ": the benchmark printed nothing (no PyTorch in the container?)", 0) end
  end)
end

-- The two sides' rows side by side: transformer sizes, square matmuls, the MLP loop.
local function compare(sides)
  local a, b = sides[1], sides[2]
  local ra, rb = a.results or {}, b.results or {}
  local ga, gb = ra.env and ra.env.gpu, rb.env and rb.env.gpu
  local out = { sides = {} }
  for _, sd in ipairs(sides) do out.sides[sd.key] = sd.results end
  local caption = "MI350X (published) columns: " .. seed.source .. "; MFU against each GPU's own dense peak (docs/training.md)"
  local function by(list, key)
    local t = {}
    for _, x in ipairs(list or {}) do t[key(x)] = x end
    return t
  end
  local ta = by(ra.transformer, function(x) return x.size end)
  local tb = by(rb.transformer, function(x) return x.size end)
  local rows, pts = {}, { {}, {} }
  for i, size in ipairs(training.SIZE_ORDER) do
    local x, y = ta[size], tb[size]
    if x or y then
      local function fig(row, gpu)
        if not row then return "—", nil, "—" end
        if row.status ~= "ok" then return row.status .. " (needs ~" .. f1((row.estimated_bytes or 0) / 2 ^ 30) .. " GiB)", nil, "—" end
        local tf = training.model_tflops(row)
        return f0(row.tokens_per_s), tf.six_n, pct(training.mfu(tf.with_attention / (row.world_size or 1), gpu, row.dtype))
      end
      local sa, tfa, ma = fig(x, ga)
      local sb, tfb, mb = fig(y, gb)
      rows[#rows + 1] = { size, sa, sb, ratio(x and x.status == "ok" and x.tokens_per_s, y and y.status == "ok" and y.tokens_per_s),
                          f1(tfa), f1(tfb), ma, mb, f0(seed.transformer[size] and seed.transformer[size].tokens_per_s) }
      if tfa then table.insert(pts[1], { i, tfa }) end
      if tfb then table.insert(pts[2], { i, tfb }) end
    end
  end
  if #rows > 0 then
    rep:add_table("GPT-style training: " .. a.label .. " vs " .. b.label, { columns = { "size", a.label .. " tokens/s", b.label .. " tokens/s",
      a.label .. " / " .. b.label, a.label .. " TFLOPS (6N)", b.label .. " TFLOPS (6N)", a.label .. " MFU", b.label .. " MFU", "MI350X tokens/s (published)" },
      rows = rows, caption = caption })
    rep:add_chart("Training TFLOPS by model size", { x_label = "size (1 small … 8 13B)", y_label = "model TFLOPS (6N)",
      series = { { name = a.label, points = pts[1] }, { name = b.label, points = pts[2] } } })
  end
  local ma = by(ra.matmul, function(x) return x.n .. x.dtype end)
  local mrows = {}
  for _, x in ipairs(rb.matmul or {}) do
    local y = ma[x.n .. x.dtype]
    mrows[#mrows + 1] = { x.n .. "×" .. x.n, x.dtype, f1(y and y.tflops), f1(x.tflops), ratio(y and y.tflops, x.tflops) }
  end
  if #mrows > 0 then
    rep:add_table("Matmul TFLOPS: " .. a.label .. " vs " .. b.label, { columns = { "size", "dtype", a.label, b.label, a.label .. " / " .. b.label },
      rows = mrows })
  end
  local la, lb = (ra.mlp or {})[1], (rb.mlp or {})[1]
  if la or lb then
    rep:add_table("3-layer MLP training loop", { columns = { "figure", a.label, b.label, a.label .. " / " .. b.label, "MI350X (published)" }, rows = {
      { "samples/s", f0(la and la.samples_per_s), f0(lb and lb.samples_per_s), ratio(la and la.samples_per_s, lb and lb.samples_per_s),
        f0(seed.mlp.samples_per_s) } }, caption = caption })
  end
  return out
end

scenario.run({
  about = "The training benchmarks of the published \"AMD MI350X Training Benchmark Results\" (matmul, MLP loop,\n" ..
          "GPT-style training) on an MI300X and an H100 droplet at the same time, one comparison report\n" ..
          "(side by side with the ratio MI300X / H100 and the published MI350X figure).",
  title = function() return "Training: MI300X vs H100" end,
  on = {}, on_refused = "it measures two droplets side by side; run scripts/training.lua with --on on each machine instead",
  params = {
    { name = "parts", default = "matmul,mlp,transformer", help = "train_bench.py parts: matmul, linear, fp8, mlp, transformer" },
    { name = "sizes", default = "small,medium,large,xl,1.5b,3b,7b", help = "transformer sizes (those that do not fit a GPU are skipped on its side)" },
    { name = "warmup", type = "integer", default = 5, min = 0, help = "training steps not timed" },
    { name = "steps", type = "integer", default = 20, min = 1, help = "timed training steps" },
    { name = "quick", type = "boolean", default = false, help = "train_bench.py --quick" },
    { name = "gpu_interval", type = "number", default = 1, min = 0.1, help = "seconds between GPU power/VRAM samples" },
    { name = "amd_size", default = "gpu-mi300x1-192gb", help = "the AMD droplet's size" },
    { name = "amd_image", default = "gpu-amd-base", help = "the AMD droplet's image" },
    { name = "amd_region", default = "atl1", help = "the AMD droplet's region" },
    { name = "nvidia_size", default = "gpu-h100x1-80gb", help = "the NVIDIA droplet's size" },
    { name = "nvidia_image", default = "gpu-h100x1-base", help = "the NVIDIA droplet's image" },
    { name = "nvidia_region", default = "nyc2", help = "the NVIDIA droplet's region" },
  },
}, function(sc)
  P, rep = sc.params, sc.report
  training.check_sizes(P.sizes)
  for p in P.parts:gmatch("[^,%s]+") do
    if p == "ddp" or not ({ matmul = 1, linear = 1, fp8 = 1, mlp = 1, transformer = 1 })[p] then
      runara.usage_error("param parts=" .. P.parts .. ": '" .. p .. "' is not one of matmul, linear, fp8, mlp, transformer " ..
            "(DDP scaling needs a multi-GPU machine: scripts/training.lua parts=ddp)")
    end
  end
  rep:metadata{ method = "the training benchmarks of the published AMD MI350X Training Benchmark Results (train_bench.py) on both machines; model TFLOPS 6N, MFU with PaLM's attention term" }
  local sides = {
    { key = "mi300x", label = "MI300X", size = P.amd_size, image = P.amd_image, region = P.amd_region },
    { key = "h100", label = "H100", size = P.nvidia_size, image = P.nvidia_image, region = P.nvidia_region },
  }
  local tasks, failed = {}, {}
  for i, side in ipairs(sides) do tasks[i] = runara.spawn(measure, sc, side) end
  for i, side in ipairs(sides) do
    local joined, ok, err = pcall(tasks[i].join, tasks[i])
    if not joined then rep:machine(side.key):fail(ok) end  -- the task itself was stopped
    if not joined or not ok then
      failed[#failed + 1] = side.label
      runara.log(side.label .. " failed: " .. tostring(joined and err or ok))
    end
  end
  rep:set("benchmarks.training_comparison", compare(sides))
  if #failed > 0 then
    error(string.format("%d of %d machines failed: %s (each one's error is in the report)", #failed, #sides, table.concat(failed, ", ")), 0)
  end
end)
