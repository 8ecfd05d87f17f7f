-- runara.finetune: torchtune fine-tuning as a benchmark — the models runara knows a recipe for, the
-- `tune download` / `tune run` command lines (AMD's MAD settings on AMD, the upstream recipe on
-- NVIDIA), and torchtune's own metric log read back into figures.
--
--   local finetune = require("runara.finetune")
--   local m = finetune.model("Qwen/Qwen3-8B")            -- { config = "qwen3/8B", gated = false, ... }
--   local log = finetune.parse(text)                      -- log.steps[i] = { step =, loss =, lr =, tokens_per_second_per_gpu =, ... }
--   local s = finetune.summary(log, 8)                    -- MAD's figures: last-half mean tokens/s/GPU, max peak_memory_alloc
--
-- torchtune's metric loggers write one line per step: DiskLogger (the recipes' default, its file
-- `log_<unix time>.txt`, announced on stdout as "Writing logs to <path>") and StdoutLogger both as
-- `Step N | name:value name:value ` (log_dict; torchtune/training/metric_logging.py), or
-- `Step N | name:value` per metric (log). Lines recorded from real runs: tests/lua/fixtures/finetune/.
local M = {}

-- Models with a torchtune config of their own (recipes/configs/<family>/<size>_{full,lora}.yaml).
-- `tokenizer` holds the overrides MAD's Torchtune_Tester_Qwen.sh passes for Qwen (vocab.json and
-- merges.txt inside the downloaded folder); `gated`: Hugging Face asks for a token and an accepted
-- licence before the download (meta-llama's and google's repositories are).
M.MODELS = {
  ["Qwen/Qwen3-0.6B"] = { config = "qwen3/0.6B", params = 0.6e9 },
  ["Qwen/Qwen3-1.7B"] = { config = "qwen3/1.7B", params = 1.7e9 },
  ["Qwen/Qwen3-4B"] = { config = "qwen3/4B", params = 4.0e9 },
  ["Qwen/Qwen3-8B"] = { config = "qwen3/8B", params = 8.2e9 },
  ["Qwen/Qwen3-14B"] = { config = "qwen3/14B", params = 14.8e9 },
  ["Qwen/Qwen3-32B"] = { config = "qwen3/32B", params = 32.8e9 },
  ["meta-llama/Llama-3.1-8B-Instruct"] = { config = "llama3_1/8B", params = 8.0e9, gated = true },
  ["meta-llama/Llama-3.2-1B-Instruct"] = { config = "llama3_2/1B", params = 1.2e9, gated = true },
  ["meta-llama/Llama-3.2-3B-Instruct"] = { config = "llama3_2/3B", params = 3.2e9, gated = true },
}
local GATED_ORGS = { ["meta-llama"] = true, google = true, mistralai = true }
M.METHODS = { "lora", "full" }
M.DTYPES = { "bf16", "fp8" }

-- A model's recipe facts; `config` (e.g. "qwen3/8B") for a model runara has no entry for.
-- A model it cannot train is the command line's mistake: a usage error (runara.usage_error:
-- exit 2, no traceback) naming the param to give.
function M.model(id, config)
  if type(id) ~= "string" or not id:match("^[%w%._%-]+/[%w%._%-]+$") then
    runara.usage_error("param model=" .. tostring(id) .. ": not a Hugging Face model id (ORG/NAME)")
  end
  local known = M.MODELS[id]
  local m = { id = id, name = id:match("/(.+)$"), org = id:match("^([^/]+)") }
  m.config = config or (known and known.config)
  m.params = known and known.params
  if known then m.gated = known.gated or false else m.gated = GATED_ORGS[m.org] or false end
  if m.org == "Qwen" then m.tokenizer = { path = "vocab.json", merges_file = "merges.txt" }
  elseif m.config and m.config:match("^llama3") then m.tokenizer = { path = "original/tokenizer.model" } end
  if not m.config then
    local names = {}
    for k in pairs(M.MODELS) do names[#names + 1] = k end
    table.sort(names)
    runara.usage_error("param model=" .. id .. ": runara knows no torchtune config for it; give config=FAMILY/SIZE " ..
          "(torchtune's recipes/configs, e.g. config=qwen3/8B) or one of: " .. table.concat(names, ", "))
  end
  return m
end

-- Whether torchtune's recipe for a method trains in a dtype, and why not: FP8 is the full
-- fine-tuning recipe's `enable_fp8_training` (torchao float8, as MAD's --fp8 sets it); the LoRA
-- recipe has no such option, and MAD runs LoRA in BF16 only.
function M.supports(method, dtype)
  if dtype == "bf16" then return true end
  if dtype == "fp8" and method == "full" then return true end
  if dtype == "fp8" then
    return false, "torchtune's lora_finetune_distributed recipe has no FP8 training (enable_fp8_training is the full " ..
                  "recipe's; AMD's MAD runs LoRA in BF16 only)"
  end
  return false, "unknown dtype " .. tostring(dtype)
end

local function shell_word(s)
  s = tostring(s)
  if s:match("^[%w%._/:=,%-]+$") then return s end
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- `tune download MODEL --output-dir DIR` (the token comes from the HF_TOKEN environment variable,
-- never the command line).
function M.download_command(m, dir)
  return "tune download " .. shell_word(m.id) .. " --output-dir " .. shell_word(dir)
end

-- `tune run --nproc_per_node N <method>_finetune_distributed --config <config>_<method> key=value…`
-- with MAD's settings (scripts/pytorch_train/Torchtune_Tester_Qwen.sh and
-- pytorch_benchmark_report.sh: packed data, compile, activation checkpointing, no CPU offload,
-- one epoch, gradient accumulation 1, seed 42, peak memory logged) and a DiskLogger in out_dir/logs.
function M.run_command(o)
  local m = o.model
  local args = {
    "tune", "run", "--nproc_per_node", tostring(o.gpus), o.method .. "_finetune_distributed",
    "--config", m.config .. "_" .. o.method,
    "checkpointer.checkpoint_dir=" .. o.model_dir,
    "checkpointer.output_dir=" .. o.out_dir .. "/checkpoints",
    "output_dir=" .. o.out_dir,
    "metric_logger._component_=torchtune.training.metric_logging.DiskLogger",
    "metric_logger.log_dir=" .. o.out_dir .. "/logs",
    "log_every_n_steps=1", "log_peak_memory_stats=True",
    "batch_size=" .. o.batch, "tokenizer.max_seq_len=" .. o.seq, "max_steps_per_epoch=" .. o.steps,
    "epochs=1", "gradient_accumulation_steps=1", "dataset.packed=True",
    "compile=" .. (o.compile and "True" or "False"), "enable_activation_checkpointing=True",
    "fsdp_cpu_offload=False", "seed=42",
  }
  for _, k in ipairs({ "path", "merges_file" }) do
    if m.tokenizer and m.tokenizer[k] then args[#args + 1] = "tokenizer." .. k .. "=" .. o.model_dir .. "/" .. m.tokenizer[k] end
  end
  if o.dtype == "fp8" then
    args[#args + 1] = "enable_fp8_training=True"
    args[#args + 1] = "fp8_recipe_name=tensorwise"  -- MAD's choice
  end
  for i, a in ipairs(args) do args[i] = shell_word(a) end
  return table.concat(args, " ")
end

-- One metric value as torchtune prints it (a float's repr, an int, or a tensor's "tensor(2.31)").
local function number(v)
  local n = tonumber(v)
  if n then return n end
  local inner = v:match("^tensor%(([^,%)]+)")
  return inner and tonumber(inner) or nil
end

-- torchtune's metric lines in `text` (a DiskLogger file, or a run's stdout with StdoutLogger
-- lines among its other output): { steps = { {step =, <metric> = value, ...}, ... } ordered by
-- step (one entry per step, metrics logged separately merged), log_path = the DiskLogger file
-- announced on stdout, or nil }. Anything else is skipped; a value that is not a number is kept
-- out (and counted in `unparsed`).
function M.parse(text)
  if type(text) ~= "string" then error("finetune.parse: argument 'text' must be a string, got " .. type(text), 2) end
  local by_step, order, unparsed, log_path = {}, {}, 0, nil
  for line in text:gmatch("[^\r\n]+") do
    line = line:gsub("^%[rank%d+%]:", "")
    log_path = log_path or line:match("^Writing logs to (%S+)")
    local n, rest = line:match("^%s*Step (%d+) | (.*)$")
    if n then
      n = tonumber(n)
      local row = by_step[n]
      if not row then row = { step = n } by_step[n] = row order[#order + 1] = n end
      for name, value in rest:gmatch("([%w_/%.]+):(%S+)") do
        local v = number(value)
        if v and v == v then row[name] = v else unparsed = unparsed + 1 end
      end
    end
  end
  table.sort(order)
  local steps = {}
  for _, n in ipairs(order) do steps[#steps + 1] = by_step[n] end
  return { steps = steps, log_path = log_path, unparsed = unparsed }
end

-- The run's figures the way AMD's MAD reads torchtune's log (Torchtune_Tester_Qwen.sh): mean
-- tokens_per_second_per_gpu and the largest peak_memory_alloc over the last half of the steps
-- (from step floor(n/2)+1: the first steps compile and warm up). Total tokens/s = per GPU × GPUs.
function M.summary(log, gpus)
  if type(log) ~= "table" then error("finetune.summary: argument 'log' must be what finetune.parse returns, got " .. type(log), 2) end
  if gpus ~= nil and not (type(gpus) == "number" and gpus >= 1 and gpus % 1 == 0) then
    error("finetune.summary: argument 'gpus' must be a whole number >= 1, got " .. tostring(gpus), 2)
  end
  local steps = log.steps or {}
  local n = #steps
  local s = { steps = n, gpus = gpus }
  if n == 0 then return s end
  local first = math.floor(n / 2) + 1
  local sum, count, mem = 0, 0, nil
  for i = first, n do
    local x = steps[i]
    if x.tokens_per_second_per_gpu then sum, count = sum + x.tokens_per_second_per_gpu, count + 1 end
    if x.peak_memory_alloc and (not mem or x.peak_memory_alloc > mem) then mem = x.peak_memory_alloc end
  end
  s.from_step = steps[first].step
  s.tokens_per_s_per_gpu = count > 0 and sum / count or nil
  s.tokens_per_s = s.tokens_per_s_per_gpu and gpus and s.tokens_per_s_per_gpu * gpus or nil
  s.peak_memory_alloc = mem
  s.loss_first, s.loss_last = steps[1].loss, steps[n].loss
  return s
end

-- Why a download or fine-tuning run failed, from its output: { kind =, cause = } with kind
-- "gated" (huggingface_hub's GatedRepoError: 401, no or a wrong token), "oom" (PyTorch's
-- OutOfMemoryError) or "error" (the last exception line, via runara.training.failure_cause,
-- which also names the rank torchrun saw die).
function M.failure_cause(text)
  local t = tostring(text or "")
  local gated = t:match("(Cannot access gated repo for url [^\n]+)")
  if gated or t:match("GatedRepoError") then
    local access = t:match("(Access to model [^\n]+)")
    return { kind = "gated", cause = (gated or "GatedRepoError") .. (access and (" " .. access) or "") }
  end
  local oom = t:match("(torch%.OutOfMemoryError: [^\n]+)") or t:match("(torch%.cuda%.OutOfMemoryError: [^\n]+)")
  if oom then return { kind = "oom", cause = oom } end
  local why = require("runara.training").failure_cause(t)
  return { kind = "error", cause = why.cause, rank = why.rank }
end

-- The published MI350X row for a method and dtype (runara.reference_numbers.finetune_seed001), or nil.
function M.reference(method, dtype)
  local seed = require("runara.reference_numbers").finetune_seed001
  return seed.runs[method .. "_" .. dtype], seed
end

return M
