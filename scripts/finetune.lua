-- finetune.lua — the MI350X report's Benchmark 5: torchtune fine-tuning (LoRA or full) of a chosen model
-- (default Qwen/Qwen3-8B) on one GPU machine, with AMD's MAD recipe settings on AMD
-- (rocm/pytorch-training, which ships torchtune) and the upstream torchtune recipe on NVIDIA
-- (NGC's PyTorch with torchtune and torchao installed when the container starts).
--
-- What it measures: tokens/s per GPU and in total, peak memory per GPU and the loss at every step,
-- read from torchtune's own metric log (its DiskLogger file) the way MAD reads it (the mean of the
-- last half of the steps; the largest peak_memory_alloc there); GPU power and VRAM for the
-- download and the fine-tuning; energy per trained token. Beside the published 8× MI350X figures.
-- The summary's headline: tokens/s per GPU and in all, the loss first → last; tune's raw output goes
-- to finetune.log, not to the terminal.
-- What it costs: gpu-mi300x1-192gb at $1.99/h; the Qwen3-8B download (16 GB) and 20 steps at
-- batch 14 × 8192 tokens take about 30 minutes (~$1). An H100 (80 GB) fits LoRA at batch 4, not a
-- full fine-tune of an 8B model.
-- Rehearse it for free: runara --sim scripts/finetune.lua
-- Params: runara scripts/finetune.lua --help
-- Secrets: --secret HF_TOKEN for a gated model (meta-llama/…): asked for before anything is created.
local scenario = require("runara.scenario")
local defaults = require("runara.droplet_defaults")
local finetune = require("runara.finetune")
local containers = require("runara.container")

-- MAD's training image on AMD (its README: `docker pull rocm/pytorch-training:v25.7`, torchtune
-- under /workspace/torchtune); NGC's PyTorch on NVIDIA, torchtune installed from PyPI.
local IMAGES = { amd = "rocm/pytorch-training:v25.7", nvidia = "nvcr.io/nvidia/pytorch:24.10-py3" }
local NVIDIA_SETUP = "pip install -q torchtune torchao"
local WORK = "/workspace/finetune"  -- the container's view of the run's working folder (sc:workdir)
-- Downloaded models stay for the next run on a machine of yours, in runara's own cache folder
-- (never a folder of the machine's user); the container sees it as MODELS.
local MODEL_CACHE, MODELS = "$HOME/.cache/runara/models", "/workspace/models"

local function f0(x) return type(x) == "number" and string.format("%.0f", x) or "—" end
local function f2(x) return type(x) == "number" and string.format("%.2f", x) or "—" end

scenario.run({
  about = "torchtune LoRA or full fine-tuning (MAD's recipe on AMD, upstream torchtune on NVIDIA): tokens/s per GPU,\n" ..
          "memory per GPU and the loss curve from torchtune's own log, beside published 8x MI350X figures.",
  title = function(p, where) return string.format("torchtune %s fine-tuning of %s (%s) on %s", p.method, p.model, p.dtype:upper(), where) end,
  needs_machine = true,
  params = {
    { name = "size", default = "gpu-mi300x1-192gb", help = "droplet size" },
    defaults.image_param(),
    defaults.region_param(),
    { name = "container", default = function() return nil end, default_help = "rocm/pytorch-training:v25.7 (AMD), nvcr.io/nvidia/pytorch:24.10-py3 (NVIDIA)",
      help = "the container image torchtune runs in" },
    { name = "model", default = "Qwen/Qwen3-8B", help = "Hugging Face model id" },
    { name = "config", default = function() return nil end, default_help = "runara's table for known models",
      help = "torchtune config FAMILY/SIZE (recipes/configs), for a model runara has no entry for" },
    { name = "method", default = "lora", choices = finetune.METHODS, help = "LoRA or full fine-tuning" },
    { name = "dtype", default = "bf16", choices = finetune.DTYPES, help = "training precision (fp8: the full recipe's torchao float8)" },
    { name = "steps", type = "integer", default = 20, min = 2, help = "training steps (MAD: 20)" },
    { name = "batch", type = "integer", default = 14, min = 1, help = "batch size per GPU (the MI350X report: 14)" },
    { name = "seq", type = "integer", default = 8192, min = 128, help = "sequence length, packed (the MI350X report: 8192)" },
    { name = "gpus", type = "integer", default = 0, min = 0, help = "GPUs to train on (0: all the machine has)" },
    { name = "compile", type = "boolean", default = true, help = "torch.compile (MAD: on)" },
    { name = "gated", default = "auto", choices = { "auto", "yes", "no" },
      help = "whether the model needs a Hugging Face token (auto: meta-llama, google, mistralai do)" },
    { name = "gpu_interval", type = "number", default = 1, min = 0.1, help = "seconds between GPU power/VRAM samples" },
  },
}, function(sc)
  local P, rep = sc.params, sc.report
  local model = finetune.model(P.model, P.config)
  local ref, seed = finetune.reference(P.method, P.dtype)
  rep:metadata{ model = model.id, size = scenario.where() == "droplet" and P.size or nil,
                method = "torchtune " .. P.method .. "_finetune_distributed, " .. P.dtype:upper() .. " (MAD's settings)" }
  local results = { model = model.id, config = model.config .. "_" .. P.method, method = P.method, dtype = P.dtype,
                    batch = P.batch, seq = P.seq, steps_asked = P.steps, reference = ref, reference_source = seed.source }
  rep:set("benchmarks.finetune", results)

  -- Decided before anything is created: a dtype the recipe lacks, a gated model without a token.
  local ok, why = finetune.supports(P.method, P.dtype)
  if not ok then
    results.status, results.reason = "not available", why
    rep:add_table("Fine-tuning (torchtune)", { columns = { "method", "dtype", "status" },
      rows = { { P.method, P.dtype:upper(), "not available: " .. why } } })
    runara.log("finetune: " .. P.method .. " in " .. P.dtype:upper() .. " is not available: " .. why .. "; nothing was run")
    return
  end
  local has_token, token = pcall(runara.secret, "HF_TOKEN")
  token = has_token and token or nil
  local gated = P.gated == "yes" or (P.gated == "auto" and model.gated)
  if gated and not token then
    error(string.format("finetune: %s is gated on Hugging Face: its download needs a token. Accept its licence at " ..
      "https://huggingface.co/%s, then run with --secret HF_TOKEN (HF_TOKEN=hf_... in the environment); nothing was created",
      model.id, model.id), 0)
  end

  rep:phase("boot")
  local m = sc:machine{ name = "finetune", size = P.size, image = P.image, region = P.region, gpu_interval = P.gpu_interval }
  local s, where = m.session, m.droplet and m.droplet.name or "the machine"
  local vendor = containers.vendor(s)
  local image = P.container or IMAGES[vendor]
  local count = m.info.gpu_count or 1
  local gpus = P.gpus > 0 and P.gpus or count
  if gpus > count then runara.usage_error(string.format("param gpus=%d: %s has %d GPU(s)", gpus, where, count)) end
  results.gpus, results.gpu, results.image = gpus, m.info.gpu_name, image
  -- The run's output (checkpoints, torchtune's log) in a new folder of its own, removed at the end.
  local dir = sc:workdir(m, "finetune")
  s:exec("umask 077 && mkdir -p \"" .. MODEL_CACHE .. "\" && mkdir " .. string.format("%q", dir .. "/out"), { quiet = true })
  local env = token and { HF_TOKEN = token } or nil  -- into the container as -e HF_TOKEN: never on a command line
  local function container(what, cmd)
    if vendor == "nvidia" and not P.container then cmd = "bash -c " .. string.format("%q", NVIDIA_SETUP .. " && " .. cmd) end
    return s:exec(containers.command{ vendor = vendor, purpose = "pytorch", image = image, ipc = "host", shm_size = "64g",
      name = "runara-tune-" .. what .. "-" .. runara.run_id, mounts = { dir .. ":" .. WORK, MODEL_CACHE .. ":" .. MODELS },
      env = token and { "HF_TOKEN" } or nil, command = cmd }, { timeout = 4 * 3600, check = false, env = env, quiet = true })
  end

  rep:phase("download")
  local model_dir = MODELS .. "/" .. model.name
  local d = container("download", finetune.download_command(model, model_dir))
  if d.code ~= 0 then
    local c = finetune.failure_cause(d.stderr .. "\n" .. d.stdout)
    if c.kind == "gated" then
      error(string.format("finetune: Hugging Face refused the download of %s on %s (401, a gated repository%s): %s. " ..
        "Accept its licence at https://huggingface.co/%s and run with --secret HF_TOKEN", model.id, where,
        token and ", and the token given was not accepted" or ", no token given", (c.cause:gsub("%.$", "")), model.id), 0)
    end
    error(string.format("finetune: tune download %s on %s failed (exit %s): %s", model.id, where, tostring(d.code), c.cause), 0)
  end

  rep:phase("finetune")
  runara.log("finetune: tune run " .. model.config .. "_" .. P.method .. " on " .. gpus .. " GPU(s) (its output: finetune.log)")
  local r = container("run", finetune.run_command{ model = model, method = P.method, dtype = P.dtype, gpus = gpus,
    batch = P.batch, seq = P.seq, steps = P.steps, compile = P.compile, model_dir = model_dir, out_dir = WORK .. "/out" })
  runara.write_file("finetune.log", r.stdout .. r.stderr)
  rep:add_file("finetune.log", "tune run's output (stdout, then stderr)")
  -- torchtune's DiskLogger file, found by the path it announced; else the Step lines on stdout.
  local announced = finetune.parse(r.stdout)
  local log = announced
  if announced.log_path and announced.log_path:sub(1, #WORK + 1) == WORK .. "/" then
    local path = dir .. "/" .. announced.log_path:sub(#WORK + 2)
    local f = s:exec("cat " .. string.format("%q", path), { quiet = true, check = false })
    if f.code == 0 then
      runara.write_file("torchtune_log.txt", f.stdout)
      rep:add_file("torchtune_log.txt", "torchtune's metric log (DiskLogger), as written on the machine")
      log = finetune.parse(f.stdout)
    end
  end
  rep:phase("done")
  local summary = finetune.summary(log, gpus)
  results.summary, results.steps = summary, log.steps
  local energy
  if m.gpu then
    local g = m.gpu:stop()
    rep:add_gpu(g)
    rep.gpu_sampler = nil
    for _, p in ipairs(g.phases or {}) do if p.label == "finetune" then energy = p.energy_j end end
  end
  local trained = P.batch * P.seq * summary.steps * gpus  -- packed: every sample is seq tokens
  if type(energy) == "number" and energy > 0 and trained > 0 then
    results.energy = { j = energy, tokens = trained, joules_per_token = energy / trained }
  end

  local caption = "MI350X column: " .. seed.source .. " (" .. seed.gpus .. " GPUs, batch " .. seed.batch .. ", seq " .. seed.seq ..
    "); this run: the mean of steps " .. tostring(summary.from_step) .. "–" .. summary.steps ..
    " (MAD's last half), memory the largest peak_memory_alloc there, as torchtune logs it"
  rep:add_table("Fine-tuning (torchtune)", { columns = { "figure", "this run", seed.label }, caption = caption, rows = {
    { "tokens/s per GPU", f0(summary.tokens_per_s_per_gpu), f0(ref and ref.tokens_per_s_per_gpu) },
    { "tokens/s total", f0(summary.tokens_per_s), f0(ref and ref.tokens_per_s) },
    { "memory per GPU (GB, peak_memory_alloc)", f2(summary.peak_memory_alloc), f2(ref and ref.memory_gb) },
    { "GPUs", tostring(gpus), tostring(seed.gpus) },
    { "batch × seq", P.batch .. " × " .. P.seq, seed.batch .. " × " .. seed.seq },
    { "steps logged", tostring(summary.steps), "—" },
    { "loss first → last", f2(summary.loss_first) .. " → " .. f2(summary.loss_last), "2.01 → 1.77 (LoRA, 11 steps)" },
    { "energy per token (J)", results.energy and string.format("%.3g", results.energy.joules_per_token) or "—", "—" },
  } })
  -- The headline: throughput per GPU and in all, and whether the loss went down.
  if type(summary.tokens_per_s_per_gpu) == "number" then
    rep:headline("fine-tuning, per GPU", summary.tokens_per_s_per_gpu, "tok/s", { digits = 0,
      note = ref and ("MI350X: " .. f0(ref.tokens_per_s_per_gpu)) or nil })
  end
  if type(summary.tokens_per_s) == "number" then
    rep:headline("fine-tuning, all " .. gpus .. " GPU(s)", summary.tokens_per_s, "tok/s", { digits = 0 })
  end
  if type(summary.loss_first) == "number" and type(summary.loss_last) == "number" then
    rep:headline("loss first → last", f2(summary.loss_first) .. " → " .. f2(summary.loss_last), nil,
      { note = summary.steps .. " steps logged" })
  end
  local loss, tps = {}, {}
  for _, x in ipairs(log.steps) do
    if x.loss then loss[#loss + 1] = { x.step, x.loss } end
    if x.tokens_per_second_per_gpu then tps[#tps + 1] = { x.step, x.tokens_per_second_per_gpu } end
  end
  local series = { { name = "this run", points = loss } }
  if P.method == "lora" then
    local sp = {}
    for _, x in ipairs(seed.lora_loss) do sp[#sp + 1] = { x.step, x.loss } end
    series[2] = { name = "MI350X LoRA (published)", points = sp }
  end
  if #loss > 0 then rep:add_chart("Loss curve", { x_label = "step", y_label = "loss", series = series }) end
  if #tps > 0 then
    rep:add_chart("Tokens/s per GPU by step", { x_label = "step", y_label = "tokens/s per GPU", series = {
      { name = "this run", points = tps },
      ref and { name = "MI350X (published)", points = { { 1, ref.tokens_per_s_per_gpu }, { P.steps, ref.tokens_per_s_per_gpu } } } or nil } })
  end

  if r.code ~= 0 then
    local c = finetune.failure_cause(r.stderr .. "\n" .. r.stdout)
    local hint = c.kind == "oom" and string.format(" (batch=%d does not fit: a smaller batch=, method=lora, more GPUs, or a larger GPU)", P.batch) or ""
    error(string.format("finetune: %s fine-tuning of %s on %s failed (exit %s) after %d logged step(s): %s%s", P.method, model.id,
      where, tostring(r.code), summary.steps, c.cause, hint), 0)
  end
  if summary.steps == 0 then
    error("finetune: tune run on " .. where .. " logged no step (no 'Step N | loss:…' line in its DiskLogger file or output); see finetune.log", 0)
  end
  results.status = "ok"
end)
