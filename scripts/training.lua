-- training.lua — the training benchmarks of an 8× MI350X report, on one GPU machine, with PyTorch in the GPU vendor's
-- container (training/train_bench.py): square matmuls, torch.matmul vs F.linear on the Llama-70B
-- shapes, FP8 GEMM where the stack has it, the 3-layer MLP loop, GPT-style training at the report's
-- eight sizes (Small … 13B), and DDP scaling with torchrun on 1, 2, 4, 8 GPUs (as many as there are).
--
-- What it measures: TFLOPS, tokens/s, model TFLOPS and MFU (docs/training.md), memory, ms/step,
-- scaling efficiency, GPU power and VRAM by phase, energy per training token; each beside the
-- MI350X report's figure. A size that does not fit is reported with the memory it needed. The
-- summary's headline: the largest model's tokens/s and MFU, the best matmul, DDP at most GPUs;
-- the benchmark's raw lines go to train_bench.jsonl, not to the terminal.
-- What it costs: gpu-mi300x1-192gb at $1.99/h, about 30 minutes with the container pull (~$1);
-- DDP needs a machine with several GPUs (gpu-mi300x8-1536gb, $15.92/h).
-- Rehearse it for free: runara --sim scripts/training.lua
-- Params: runara scripts/training.lua --help (an H100: size=gpu-h100x1-80gb; its image and region follow the size)
local scenario = require("runara.scenario")
local defaults = require("runara.droplet_defaults")
local training = require("runara.training")
local training_report = require("runara.training_report")
local containers = require("runara.container")

local function list(text) local out = {} for x in tostring(text):gmatch("[^,%s]+") do out[#out + 1] = x end return out end

scenario.run({
  about = "Training benchmarks (matmul, matmul vs F.linear, FP8 GEMM, MLP loop, GPT-style training, DDP scaling)\n" ..
          "with PyTorch in the GPU vendor's container: tokens/s, TFLOPS, MFU, beside published 8x MI350X figures.",
  title = function(_, where) return "Training benchmarks on " .. where end,
  needs_machine = true,
  params = {
    { name = "size", default = "gpu-mi300x1-192gb", help = "droplet size" },
    defaults.image_param(),
    defaults.region_param(),
    { name = "container", default = function() return nil end, default_help = "the vendor's PyTorch image",
      help = "the container image the benchmark runs in" },
    { name = "parts", default = "matmul,linear,fp8,mlp,transformer,ddp", help = "comma-separated: " .. table.concat(training.PARTS, ", ") },
    { name = "sizes", default = "all", help = "transformer sizes: all, or some of " .. table.concat(training.SIZE_ORDER, ", ") ..
      " (named sizes that do not fit fail the run; with all they are reported skipped)" },
    { name = "ddp_size", default = "7b", help = "the size DDP scales (the MI350X report's: 7b)" },
    { name = "gpus", default = "1,2,4,8", help = "DDP GPU counts (those above the machine's are left out)" },
    { name = "dtypes", default = "fp16,bf16", help = "GEMM dtypes: fp16, bf16" },
    { name = "train_dtype", default = "bf16", help = "training dtype: bf16, or fp8 (torchao; 'not available' without it)" },
    { name = "warmup", type = "integer", default = 5, min = 0, help = "training steps not timed" },
    { name = "steps", type = "integer", default = 20, min = 1, help = "timed training steps" },
    { name = "quick", type = "boolean", default = false, help = "train_bench.py --quick: small GEMMs, fewer repetitions" },
    { name = "gpu_interval", type = "number", default = 1, min = 0.1, help = "seconds between GPU power/VRAM samples" },
    { name = "nodes", type = "integer", default = 1, min = 1,
      help = "droplets: above 1, DDP also runs across all of them (torchrun on every node, rendezvous on the head's " ..
             "private address; 8-GPU sizes only)" },
  },
}, function(sc)
  local P, rep = sc.params, sc.report
  local parts = {}
  for _, p in ipairs(list(P.parts)) do
    local known = false
    for _, k in ipairs(training.PARTS) do known = known or k == p end
    if not known then runara.usage_error("param parts=" .. P.parts .. ": '" .. p .. "' is not one of " .. table.concat(training.PARTS, ", ")) end
    parts[p] = true
  end
  local explicit = P.sizes ~= "all"
  local sizes = explicit and training.check_sizes(P.sizes) or training.SIZE_ORDER
  training.check_sizes(P.ddp_size, "ddp_size")
  for _, d in ipairs(list(P.dtypes)) do
    if d ~= "fp16" and d ~= "bf16" then runara.usage_error("param dtypes=" .. P.dtypes .. ": '" .. d .. "' is not one of fp16, bf16") end
  end
  if P.train_dtype ~= "bf16" and P.train_dtype ~= "fp8" then runara.usage_error("param train_dtype=" .. P.train_dtype .. ": not one of bf16, fp8") end
  local gpus = {}
  for _, g in ipairs(list(P.gpus)) do
    local n = tonumber(g)
    if not n or n < 1 or n ~= math.floor(n) then runara.usage_error("param gpus=" .. P.gpus .. ": '" .. g .. "' is not a GPU count") end
    gpus[#gpus + 1] = n
  end
  rep:metadata{ size = scenario.where() == "droplet" and P.size or nil,
                method = "train_bench.py (the MI350X report's training benchmarks); model TFLOPS 6N, MFU with PaLM's attention term" }

  if P.nodes > 1 and scenario.where() ~= "droplet" then
    runara.usage_error("param nodes=" .. P.nodes .. ": several nodes are droplets of this run, and --on names one machine; leave --on out")
  end

  rep:phase("boot")
  -- One machine, or a cluster (runara.cluster: a VPC, the run's firewall) whose head runs every part.
  local c = P.nodes > 1 and sc:cluster{ name = "training", nodes = P.nodes, size = P.size, image = P.image, region = P.region,
    gpu_interval = P.gpu_interval } or nil
  local m = c and c.head or sc:machine{ name = "training", size = P.size, image = P.image, region = P.region, gpu_interval = P.gpu_interval }
  local s = m.session
  local vendor = containers.vendor(s)
  local image = P.container or containers.image(vendor, "pytorch")
  -- Each node's own new folder for the benchmark (never a ~/training of the machine's user),
  -- removed at the end; the head's is `dir`.
  local dirs = {}
  for _, node in ipairs(c and c.nodes or { m }) do
    dirs[node] = sc:workdir(node, "training")
    node.session:upload("training/train_bench.py", dirs[node] .. "/train_bench.py")
  end
  local dir = dirs[m]
  local common = string.format(" --warmup-steps %d --steps %d --dtypes %s --train-dtype %s%s",
    P.warmup, P.steps, P.dtypes, P.train_dtype, P.quick and " --quick" or "")
  local output = {}
  local function bench(phase, launcher, args)
    rep:phase(phase)
    runara.log("training: " .. phase .. " (raw lines: train_bench.jsonl)")
    local r = s:exec(containers.command{ vendor = vendor, purpose = "pytorch", image = image, ipc = "host", shm_size = "16g",
      name = "runara-train-" .. runara.run_id, mounts = { dir .. ":/workspace" },
      command = launcher .. " /workspace/train_bench.py " .. args .. common }, { timeout = 7200, check = false, quiet = true })
    output[#output + 1] = r.stdout
    runara.write_file("train_bench.jsonl", table.concat(output))  -- rewritten whole: what ran so far
    return r, training.parse(r.stdout)
  end

  local all = { matmul = {}, linear = {}, fp8 = {}, mlp = {}, transformer = {}, ddp = {} }
  local energy, failure = {}, nil
  local function keep(r)
    all.env = all.env or r.env
    for k, v in pairs(all) do if k ~= "env" then for _, x in ipairs(r[k] or {}) do v[#v + 1] = x end end end
  end
  local function tokens(rows)
    local n = 0
    for _, x in ipairs(rows) do if x.status == "ok" then n = n + x.batch * x.seq * (x.warmup + x.steps) * (x.world_size or 1) end end
    return n
  end
  local function check(res, what)
    if res.code == 0 then return true end
    local why = training.failure_cause(res.stderr)
    failure = string.format("training: %s on %s failed (exit %s)%s: %s", what, m.droplet and m.droplet.name or "the machine", tostring(res.code),
      why.rank and (": rank " .. why.rank .. " died") or "", why.cause)
    return false
  end

  local gemm_parts = {}
  for _, p in ipairs({ "matmul", "linear", "fp8", "mlp" }) do if parts[p] then gemm_parts[#gemm_parts + 1] = p end end
  if #gemm_parts > 0 then
    local res, r = bench("gemm", "python3", "--parts " .. table.concat(gemm_parts, ","))
    keep(r)
    check(res, "the GEMM and MLP parts")
  end
  if not failure and parts.transformer then
    local res, r = bench("transformer", "python3", "--parts transformer --sizes " .. table.concat(sizes, ","))
    keep(r)
    energy[#energy + 1] = { phase = "transformer", tokens = tokens(r.transformer) }
    check(res, "transformer training")
  end
  local count = m.info.gpu_count or 1
  if not failure and parts.ddp then
    for _, g in ipairs(gpus) do
      if g <= count and not failure then
        local res, r = bench("ddp " .. g .. " GPU", "torchrun --standalone --nproc_per_node=" .. g, "--parts ddp --sizes " .. P.ddp_size)
        keep(r)
        energy[#energy + 1] = { phase = "ddp " .. g .. " GPU", tokens = tokens(r.ddp) }
        check(res, "DDP on " .. g .. " GPUs (torchrun)")
      end
    end
  end
  -- DDP across every node: torchrun on each (c10d rendezvous on the head's private address), the
  -- containers on the host network with NCCL/Gloo on the private interface; rank 0, on the head, prints.
  if not failure and parts.ddp and c then
    local phase = string.format("ddp %d nodes", #c.nodes)
    rep:phase(phase)
    for _, node in ipairs(c.nodes) do if node.rank > 1 and node.gpu then pcall(node.gpu.mark, node.gpu, phase) end end
    local tasks = {}
    for i, l in ipairs(c:torchrun{ nproc_per_node = count }) do
      tasks[i] = runara.spawn(function()
        return l.node.session:exec(containers.command{ vendor = vendor, purpose = "pytorch", image = image, ipc = "host",
          network = "host", shm_size = "16g", name = "runara-train-" .. runara.run_id, mounts = { dirs[l.node] .. ":/workspace" },
          env = l.env, command = l.command .. " /workspace/train_bench.py --parts ddp --sizes " .. P.ddp_size .. common },
          { timeout = 7200, check = false, quiet = true })
      end)
    end
    local results = {}
    for i, task in ipairs(tasks) do
      local ok, res = pcall(task.join, task)
      results[i] = ok and res or { code = "none", stderr = tostring(res), stdout = "" }
    end
    output[#output + 1] = results[1].stdout
    runara.write_file("train_bench.jsonl", table.concat(output))
    local r = training.parse(results[1].stdout)
    keep(r)
    energy[#energy + 1] = { phase = phase, tokens = tokens(r.ddp), nodes = #c.nodes }
    for _, node in ipairs(c.nodes) do if node.rank > 1 and node.gpu then pcall(node.gpu.mark, node.gpu, "done") end end
    for i, res in ipairs(results) do
      if not failure then
        check(res, string.format("DDP on %d nodes x %d GPUs (torchrun), node %d (%s)", #c.nodes, count, i, c.nodes[i].droplet.name))
      end
    end
  end
  rep:phase("done")
  -- Every other node's GPUs: a whole-run summary each (the head's are the report's charts).
  local node_rows = {}
  for _, node in ipairs(c and c.nodes or {}) do
    if node.rank > 1 and node.gpu then
      local g = node.gpu:stop()
      local sum = g.summary or {}
      node.gpu = nil
      -- The multi-node phase's energy is every node's: the head's (below) plus each worker's.
      for _, e in ipairs(energy) do
        for _, p in ipairs(g.phases or {}) do
          if e.nodes and p.label == e.phase and p.energy_j then e.workers_j = (e.workers_j or 0) + p.energy_j end
        end
      end
      node_rows[#node_rows + 1] = { tostring(node.rank), node.droplet.name, string.format("%.0f", sum.mean_power_w or 0),
        string.format("%.1f", (sum.peak_vram_bytes or 0) / 2 ^ 30), string.format("%.1f", (sum.energy_j or 0) / 1000) }
    end
  end
  if #node_rows > 0 then
    rep:add_table("GPUs of the other nodes", { columns = { "node", "droplet", "mean power (W, all GPUs)", "peak VRAM (GiB)", "energy (kJ)" },
      rows = node_rows, caption = "Each worker node's GPUs over the whole run (they work only in the multi-node DDP phase)." })
  end
  if m.gpu then
    local g = m.gpu:stop()
    rep:add_gpu(g)
    rep.gpu_sampler = nil
    for _, e in ipairs(energy) do
      for _, p in ipairs(g.phases or {}) do if p.label == e.phase then e.j = p.energy_j end end
      if e.j and e.workers_j then e.j, e.workers_j = e.j + e.workers_j, nil end
    end
  end
  rep:add_file("train_bench.jsonl", "the benchmark's output: one JSON line per measurement")
  rep:set("benchmarks.training", training_report.add(rep, all, { energy = energy }))
  local left_out = {}
  for _, g in ipairs(gpus) do if g > count then left_out[#left_out + 1] = g end end
  if parts.ddp and #left_out > 0 then
    rep:set("benchmarks.training.ddp_left_out", { gpus = left_out, reason = "the machine has " .. count .. " GPU(s)" })
  end
  if failure then error(failure, 0) end
  if explicit then
    for _, x in ipairs(all.transformer) do
      if x.status == "skipped" then
        error(string.format("training: size %s does not fit on %s: it needs about %.1f GiB, the GPU has %.1f GiB " ..
          "(param sizes=%s; a smaller batch or a larger GPU)", x.size, tostring(all.env and all.env.gpu),
          (x.estimated_bytes or 0) / 2 ^ 30, (x.memory_total_bytes or 0) / 2 ^ 30, P.sizes), 0)
      end
    end
  end
  if not all.env then error("training: the benchmark printed nothing (no PyTorch in " .. image .. "?)", 0) end
end)
