-- runara.training: the output of scripts/training/train_bench.py (one flat JSON object per line,
-- each with a "part") read into results, and the figures built on them: model TFLOPS per
-- transformer run, MFU against the GPU's peak, DDP scaling efficiency. Formulas in docs/training.md.
--
--   local training = require("runara.training")
--   local r = training.parse(stdout)          -- r.env, r.matmul, r.linear, r.fp8, r.mlp, r.transformer, r.ddp
--   local tf = training.model_tflops(row)     -- { six_n =, with_attention = }
local M = {}

-- The model configurations of the published "AMD MI350X Training Benchmark Results" (Benchmark 3), as train_bench.py's SIZES: the GPT-2 vocabulary
-- (50257) with tied embeddings gives the parameter counts it prints.
M.VOCAB = 50257
M.SIZES = {
  small = { layers = 6, heads = 6, d_model = 384, d_ff = 1536, batch = 32, seq = 512 },
  medium = { layers = 12, heads = 12, d_model = 768, d_ff = 3072, batch = 16, seq = 512 },
  large = { layers = 24, heads = 16, d_model = 1024, d_ff = 4096, batch = 8, seq = 512 },
  xl = { layers = 36, heads = 20, d_model = 1280, d_ff = 5120, batch = 4, seq = 512 },
  ["1.5b"] = { layers = 48, heads = 24, d_model = 1536, d_ff = 6144, batch = 4, seq = 512 },
  ["3b"] = { layers = 32, heads = 32, d_model = 2560, d_ff = 10240, batch = 2, seq = 512 },
  ["7b"] = { layers = 32, heads = 32, d_model = 4096, d_ff = 11008, batch = 8, seq = 1024 },
  ["13b"] = { layers = 40, heads = 40, d_model = 5120, d_ff = 13824, batch = 4, seq = 1024 },
}
M.SIZE_ORDER = { "small", "medium", "large", "xl", "1.5b", "3b", "7b", "13b" }
M.PARTS = { "matmul", "linear", "fp8", "mlp", "transformer", "ddp" }

-- Parameters of train_bench.py's GPT: per layer QKV and output projections, the two FFN
-- matrices, their biases and two LayerNorms; token and position embeddings; the final LayerNorm.
function M.param_count(c)
  local d, ff = c.d_model, c.d_ff
  return c.layers * (4 * d * d + 2 * d * ff + 9 * d + ff) + (M.VOCAB + c.seq) * d + 2 * d
end

-- A JSON object (what json.dumps writes for a dict) as a Lua table, or nil when the line is not
-- one. Keys whose value is null are left out: a row's missing figure reads as nil.
local function decode_object(line)
  local ok, o = pcall(runara.json.decode, line)
  if not ok or type(o) ~= "table" or runara.json.is_array(o) then return nil end
  for k, v in pairs(o) do
    if v == runara.json.null then o[k] = nil end
  end
  return o
end
M.decode_object = decode_object

-- Each part's lines as a list; `env` the first env line; `other` counts lines that are JSON
-- objects of no known part. Anything else (a container's pull chatter, a traceback) is skipped.
function M.parse(text)
  if type(text) ~= "string" then error("training.parse: argument 'text' must be a string, got " .. type(text), 2) end
  local r = { matmul = {}, linear = {}, fp8 = {}, mlp = {}, transformer = {}, ddp = {}, other = 0 }
  for line in text:gmatch("[^\n]+") do
    local o = line:match("^%s*{") and decode_object(line)
    if o and o.part == "env" then
      r.env = r.env or o
    elseif o and type(o.part) == "string" and r[o.part] and o.part ~= "other" then
      local list = r[o.part]
      list[#list + 1] = o
    elseif o then
      r.other = r.other + 1
    end
  end
  return r
end

-- Model FLOPs per trained token. six_n: 6·N (forward 2·N, backward 4·N; Kaplan et al. 2020), the
-- figure that report's TFLOPS column uses; with_attention adds the attention scores and their
-- backward, 12·layers·seq·d_model (PaLM's MFU formula, Chowdhery et al. 2022, appendix B;
-- causal masking not discounted).
function M.flops_per_token(params, layers, seq, d_model)
  local six_n = 6 * params
  return { six_n = six_n, with_attention = six_n + 12 * layers * seq * d_model }
end

-- A transformer or ddp row's model TFLOPS in total (all its GPUs), by both formulas; nil
-- for a row that did not run.
function M.model_tflops(row)
  if type(row) ~= "table" or row.status ~= "ok" or type(row.tokens_per_s) ~= "number" or type(row.params) ~= "number" then
    return nil
  end
  local f = M.flops_per_token(row.params, row.layers or 0, row.seq or 0, row.d_model or 0)
  return { six_n = f.six_n * row.tokens_per_s / 1e12, with_attention = f.with_attention * row.tokens_per_s / 1e12 }
end

-- Which GPU of the peak table a device name is ("AMD Instinct MI300X", "NVIDIA H100 80GB HBM3").
local GPU_PATTERNS = {
  { "mi355x", "mi355x" }, { "mi350x", "mi350x" }, { "mi325x", "mi325x" }, { "mi300x", "mi300x" },
  { "h200", "h200" }, { "h100.*pcie", "h100_pcie" }, { "h100", "h100_sxm" },
}
function M.gpu_key(name)
  if type(name) ~= "string" then return nil end
  local n = name:lower()
  for _, p in ipairs(GPU_PATTERNS) do if n:find(p[1]) then return p[2] end end
  return nil
end

-- The GPU's dense peak TFLOPS for a dtype, and the table's entry (with its source); nil when
-- the table does not know the GPU or dtype.
function M.peak(gpu_name, dtype)
  local peaks = require("runara.reference_numbers").training_peaks
  local entry = peaks.gpus[M.gpu_key(gpu_name) or ""]
  local v = entry and entry.dense_tflops[dtype]
  return v, entry
end

-- Model FLOPs utilisation: achieved TFLOPS per GPU over the GPU's dense peak, or nil.
function M.mfu(tflops_per_gpu, gpu_name, dtype)
  local peak = M.peak(gpu_name, dtype)
  if not peak or type(tflops_per_gpu) ~= "number" then return nil end
  return tflops_per_gpu / peak
end

-- DDP scaling: per size, the rows ordered by GPU count with efficiency = tokens/s at N GPUs /
-- (N × tokens/s at 1 GPU), nil where the 1-GPU run is missing.
function M.scaling(rows)
  local by_size = {}
  for _, r in ipairs(rows or {}) do
    if r.status == "ok" and type(r.tokens_per_s) == "number" and type(r.world_size) == "number" then
      by_size[r.size] = by_size[r.size] or {}
      table.insert(by_size[r.size], r)
    end
  end
  local out = {}
  for size, list in pairs(by_size) do
    table.sort(list, function(a, b) return a.world_size < b.world_size end)
    local base
    for _, r in ipairs(list) do if r.world_size == 1 then base = r.tokens_per_s end end
    local points = {}
    for _, r in ipairs(list) do
      points[#points + 1] = { gpus = r.world_size, tokens_per_s = r.tokens_per_s,
                              efficiency = base and r.tokens_per_s / (r.world_size * base) or nil }
    end
    out[size] = points
  end
  return out
end

-- Why a benchmark process failed, from its stderr: { rank = N or nil, cause = "…" }. Under
-- torchrun the rank that died first is the one under "Root Cause" (the "Failures:" list above it
-- names ranks torchrun itself then stopped: recorded on an H200, tests/fixtures/training/); the
-- cause is that rank's own exception line (NCCL/RCCL's DistBackendError, PyTorch's
-- OutOfMemoryError, a CUDA/HIP error), not torchrun's ChildFailedError that wraps it.
function M.failure_cause(stderr)
  local err = tostring(stderr or "")
  local rank = err:match("Root Cause.-\n%s*rank%s*:%s*(%d+)") or err:match("\n%s*rank%s*:%s*(%d+) %(local_rank")
  local cause
  for line in err:gmatch("[^\n]+") do
    line = line:gsub("^%[rank%d+%]:%s*", "")  -- torchrun prefixes each rank's lines
    local name = line:match("^([%w_%.]*Error): ") or line:match("^([%w_%.]*Exception): ")
    if name and not name:match("ChildFailedError$") then
      cause = line
      if name:match("DistBackendError$") or name:match("OutOfMemoryError$") then break end
    end
  end
  cause = cause or err:match("([^\n]+)\n*$") or "no stderr"
  return { rank = rank and tonumber(rank) or nil, cause = cause }
end

-- The sizes named in a comma list, each checked. A bad one is the command line's mistake, a
-- usage error (runara.usage_error: exit 2, no traceback) naming the param (`param`, default
-- "sizes") and the known sizes.
function M.check_sizes(list, param)
  param = param or "sizes"
  local out = {}
  for s in tostring(list):gmatch("[^,%s]+") do
    if not M.SIZES[s:lower()] then
      runara.usage_error("param " .. param .. "=" .. tostring(list) .. ": unknown size '" .. s .. "'; known: " .. table.concat(M.SIZE_ORDER, ", "))
    end
    out[#out + 1] = s:lower()
  end
  if #out == 0 then runara.usage_error("param " .. param .. " is empty; known: " .. table.concat(M.SIZE_ORDER, ", ")) end
  return out
end

return M
