-- runara.training_report: train_bench.py's results (runara.training.parse) as report tables and
-- charts, each beside the published 8× MI350X figure for the same row (reference_numbers.lua's
-- training_seed001), labelled with its source.
--
--   require("runara.training_report").add(rep, parsed, { energy = { transformer = {j =, tokens =} } })
local training = require("runara.training")
local errors = require("runara.errors")
local seed = require("runara.reference_numbers").training_seed001

local M = {}

local function f1(x) return type(x) == "number" and string.format("%.1f", x) or "—" end
local function f0(x) return type(x) == "number" and string.format("%.0f", x) or "—" end
local function gib(b) return type(b) == "number" and string.format("%.1f", b / 2 ^ 30) or "—" end
local function pct(x) return type(x) == "number" and string.format("%.1f %%", 100 * x) or "—" end

-- One row per transformer (or ddp) line: ok with its figures, skipped with the memory it needed.
local function transformer_rows(list, gpu)
  local rows, results = {}, {}
  for _, x in ipairs(list) do
    local ref = seed.transformer[x.size] or {}
    local tf = training.model_tflops(x)
    local r = { size = x.size, gpus = x.world_size, status = x.status, params = x.params, batch = x.batch, seq = x.seq,
                tokens_per_s = x.tokens_per_s, tokens_per_s_per_gpu = x.tokens_per_s_per_gpu, ms_per_step = x.ms_per_step,
                peak_memory_bytes = x.peak_memory_bytes, reason = x.reason, estimated_bytes = x.estimated_bytes,
                memory_total_bytes = x.memory_total_bytes }
    if tf then
      r.model_tflops, r.model_tflops_with_attention = tf.six_n, tf.with_attention
      r.mfu = training.mfu(tf.with_attention / (x.world_size or 1), gpu, x.dtype)
    end
    results[#results + 1] = r
    if x.status == "ok" then
      rows[#rows + 1] = { x.size, tostring(x.world_size or 1), string.format("%.2fB", (x.params or 0) / 1e9), tostring(x.batch), tostring(x.seq),
        f0(x.tokens_per_s), f0(ref.tokens_per_s), f1(r.model_tflops), f1(ref.tflops), pct(r.mfu), gib(x.peak_memory_bytes),
        f1(ref.memory_gb), f1(x.ms_per_step), f1(ref.ms_per_step) }
    else
      rows[#rows + 1] = { x.size, tostring(x.world_size or 1), string.format("%.2fB", (x.params or 0) / 1e9), tostring(x.batch), tostring(x.seq),
        (x.status or "?") .. ": " .. tostring(x.reason), f0(ref.tokens_per_s), "—", f1(ref.tflops), "—",
        "needs ~" .. gib(x.estimated_bytes) .. " of " .. gib(x.memory_total_bytes), f1(ref.memory_gb), "—", f1(ref.ms_per_step) }
    end
  end
  return rows, results
end

local TRANSFORMER_COLUMNS = { "size", "GPUs", "params", "batch", "seq", "tokens/s", "MI350X tokens/s", "TFLOPS (6N)",
  "MI350X TFLOPS", "MFU (PaLM)", "peak GiB", "MI350X GB", "ms/step", "MI350X ms/step" }

-- Adds the tables and charts; returns what goes into results.json's benchmarks.training.
function M.add(rep, r, opts)
  if type(rep) ~= "table" or type(rep.add_table) ~= "function" or type(rep.add_chart) ~= "function" then
    error("training_report.add: argument 'report' must be a report (runara.report's new), got " .. errors.show(rep), 2)
  end
  local parts = { "matmul", "linear", "fp8", "mlp", "transformer", "ddp" }
  if type(r) ~= "table" then
    error("training_report.add: argument 'results' must be what training.parse returns, got " .. type(r), 2)
  end
  for _, k in ipairs(parts) do
    if type(r[k]) ~= "table" then
      error("training_report.add: argument 'results' must be what training.parse returns (its '" .. k .. "' list is missing)", 2)
    end
  end
  if opts ~= nil and (type(opts) ~= "table" or (opts.energy ~= nil and type(opts.energy) ~= "table")) then
    error("training_report.add: options must be a table (energy = a list of { phase =, j =, tokens = })", 2)
  end
  opts = opts or {}
  local gpu = r.env and r.env.gpu
  local out = { env = r.env, seed_source = seed.source }
  local caption = "MI350X columns: " .. seed.source
  if #r.matmul > 0 then
    local rows, pts = {}, {}
    for _, m in ipairs(r.matmul) do
      local peak = training.peak(gpu, m.dtype)
      rows[#rows + 1] = { m.n .. "×" .. m.n, m.dtype, string.format("%.3f", m.median_ms or 0), f1(m.tflops),
                          pct(peak and m.tflops / peak), m.dtype == "fp16" and f0(seed.matmul_fp16_tflops[m.n]) or "—" }
      pts[m.dtype] = pts[m.dtype] or {}
      table.insert(pts[m.dtype], { m.n, m.tflops })
    end
    rep:add_table("Matmul (square)", { columns = { "size", "dtype", "median ms", "TFLOPS", "of dense peak", "MI350X FP16 TFLOPS" },
      rows = rows, caption = caption .. "; peak: " .. ((select(2, training.peak(gpu, "bf16")) or {}).source or "GPU not in the peak table") })
    local series = {}
    for dtype, p in pairs(pts) do series[#series + 1] = { name = "matmul " .. dtype, points = p } end
    table.sort(series, function(a, b) return a.name < b.name end)
    rep:add_chart("Matmul TFLOPS by size", { x_label = "matrix size (N×N)", y_label = "TFLOPS", series = series })
    out.matmul = r.matmul
  end
  if #r.linear > 0 then
    local rows = {}
    for _, l in ipairs(r.linear) do
      local ref = seed.linear[l.m .. "x" .. l.n .. "x" .. l.k] or {}
      rows[#rows + 1] = { string.format("(%d, %d, %d)", l.m, l.n, l.k), l.name or "", l.dtype, f1(l.matmul_tflops), f1(l.linear_tflops),
        pct(l.matmul_tflops and l.linear_tflops and (l.matmul_tflops - l.linear_tflops) / l.linear_tflops),
        f0(ref.matmul), f0(ref.linear) }
    end
    rep:add_table("torch.matmul vs F.linear", { columns = { "shape (M, N, K)", "what", "dtype", "matmul TFLOPS", "F.linear TFLOPS",
      "difference", "MI350X matmul", "MI350X F.linear" }, rows = rows, caption = caption .. " (FP16); an L2 flush before each repetition" })
    out.linear = r.linear
  end
  if #r.fp8 > 0 then
    local rows = {}
    for _, x in ipairs(r.fp8) do
      rows[#rows + 1] = x.status == "ok" and { string.format("(%d, %d, %d)", x.m, x.n, x.k), x.dtype or "", f1(x.tflops) }
                        or { "—", "not available", tostring(x.reason) }
    end
    rep:add_table("FP8 GEMM (torch._scaled_mm)", { columns = { "shape (M, N, K)", "dtype", "TFLOPS" }, rows = rows })
    out.fp8 = r.fp8
  end
  if #r.mlp > 0 then
    local x = r.mlp[1]
    rep:add_table("3-layer MLP training loop", { columns = { "metric", "this run", "MI350X" }, rows = {
      { "samples/s", f0(x.samples_per_s), f0(seed.mlp.samples_per_s) }, { "ms/step", string.format("%.2f", x.ms_per_step or 0), string.format("%.2f", seed.mlp.ms_per_step) },
      { "batch, steps", x.batch .. ", " .. x.steps, seed.mlp.batch .. ", " .. seed.mlp.steps } }, caption = caption })
    out.mlp = x
  end
  if #r.transformer > 0 then
    local rows, results = transformer_rows(r.transformer, gpu)
    rep:add_table("GPT-style training", { columns = TRANSFORMER_COLUMNS, rows = rows, caption = caption ..
      "; TFLOPS (6N) = 6·params·tokens/s, the MI350X report's formula; MFU with PaLM's 6N + 12·layers·seq·d_model per token (docs/training.md)" })
    local pts, ref = {}, {}
    for i, name in ipairs(training.SIZE_ORDER) do
      for _, x in ipairs(results) do if x.size == name and x.model_tflops then pts[#pts + 1] = { i, x.model_tflops } end end
      if seed.transformer[name] then ref[#ref + 1] = { i, seed.transformer[name].tflops } end
    end
    rep:add_chart("Training TFLOPS by model size", { x_label = "size (1 small … 8 13B)", y_label = "model TFLOPS (6N)",
      series = { { name = "this run", points = pts }, { name = "MI350X (published)", points = ref } } })
    out.transformer = results
  end
  if #r.ddp > 0 then
    local rows, results = transformer_rows(r.ddp, gpu)
    rep:add_table("DDP training", { columns = TRANSFORMER_COLUMNS, rows = rows, caption = caption })
    local eff = training.scaling(r.ddp)
    local series = {}
    for size, points in pairs(eff) do
      local p = {}
      for _, x in ipairs(points) do if x.efficiency then p[#p + 1] = { x.gpus, 100 * x.efficiency } end end
      series[#series + 1] = { name = size .. " this run", points = p }
    end
    local sp = {}
    for _, x in ipairs(seed.ddp_7b) do sp[#sp + 1] = { x.gpus, 100 * x.efficiency } end
    series[#series + 1] = { name = "7b MI350X (published)", points = sp }
    rep:add_chart("DDP scaling efficiency", { x_label = "GPUs", y_label = "% of linear", series = series })
    out.ddp, out.scaling = results, eff
  end
  local erows = {}
  for _, e in ipairs(opts.energy or {}) do
    if type(e.j) == "number" and e.j > 0 and type(e.tokens) == "number" and e.tokens > 0 then
      erows[#erows + 1] = { e.phase, f0(e.tokens), string.format("%.0f", e.j), string.format("%.4f", e.j / e.tokens) }
      e.joules_per_token = e.j / e.tokens
    end
  end
  if #erows > 0 then
    rep:add_table("Energy per training token", { columns = { "phase", "tokens trained (warm-up included)", "GPU energy (J)", "J per token" },
      rows = erows, caption = "the GPUs' energy over the phase (model set-up included) over every token it trained" })
    out.energy = opts.energy
  end
  M.headline(rep, out)
  return out
end

-- The suite's headline (rep:headline): the largest model trained on one GPU (tokens/s, MFU), the
-- best matmul TFLOPS, and DDP at the most GPUs (tokens/s in all, scaling efficiency).
function M.headline(rep, out)
  local best
  for _, x in ipairs(out.transformer or {}) do
    if x.status == "ok" and (x.gpus or 1) == 1 and type(x.tokens_per_s) == "number" then
      if not best or (x.params or 0) > (best.params or 0) then best = x end
    end
  end
  if best then
    rep:headline("training " .. best.size .. " (one GPU)", best.tokens_per_s, "tok/s", { digits = 0,
      note = string.format("batch %s × seq %s%s", tostring(best.batch), tostring(best.seq),
        best.model_tflops and string.format(", %.1f model TFLOPS (6N)", best.model_tflops) or "") })
    if type(best.mfu) == "number" then rep:headline("MFU, training " .. best.size, 100 * best.mfu, "%", { note = "PaLM's formula, dense peak" }) end
  end
  local top = {}
  for _, m in ipairs(out.matmul or {}) do
    if type(m.tflops) == "number" and (not top[m.dtype] or m.tflops > top[m.dtype]) then top[m.dtype] = m.tflops end
  end
  for _, dtype in ipairs({ "fp16", "bf16" }) do
    if top[dtype] then rep:headline("best " .. dtype:upper() .. " matmul (one GPU)", top[dtype], "TFLOPS", { digits = 0 }) end
  end
  local ddp
  for _, x in ipairs(out.ddp or {}) do
    if x.status == "ok" and type(x.tokens_per_s) == "number" and (not ddp or (x.gpus or 1) > (ddp.gpus or 1)) then ddp = x end
  end
  if ddp and (ddp.gpus or 1) > 1 then
    local eff
    for _, p in ipairs((out.scaling or {})[ddp.size] or {}) do if p.gpus == ddp.gpus then eff = p.efficiency end end
    rep:headline(string.format("DDP %s on %d GPUs (all GPUs)", ddp.size, ddp.gpus), ddp.tokens_per_s, "tok/s", { digits = 0,
      note = eff and string.format("scaling efficiency %.0f %%", 100 * eff) or nil })
  end
end

return M
