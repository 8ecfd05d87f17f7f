-- runara.report_efficiency: what each load cost and how efficiently it ran, at the billed price:
-- dollars per million output (and total) tokens, steady-state and all-in, tokens/s per GPU,
-- interactivity and tokens per joule; and the headline's (the load with the highest output
-- throughput, and the whole run all-in). Pure functions over a load's figures (report.lua's
-- summarize) and its machine's price, GPU count and whole-life cost. Formulas: docs/report.md#cost-and-efficiency.
local report_format = require("runara.report_format")
local finite = report_format.finite

local M = {}

local function positive(v) return finite(v) and v > 0 end

-- The tokens a load produced: output, and total (input + output, as vLLM's total_token_throughput).
local function tokens(m)
  local out = m.total_output_tokens
  if not finite(out) and finite(m.output_throughput) and finite(m.duration) then out = m.output_throughput * m.duration end
  local input = m.total_input_tokens
  local total = finite(out) and finite(input) and (out + input) or nil
  if not total and finite(m.total_token_throughput) and finite(m.duration) then total = m.total_token_throughput * m.duration end
  return out, total
end
M.tokens = tokens

local function per_million(usd, n) return finite(usd) and positive(n) and usd / n * 1e6 or nil end

-- One load's figures. `m`: the load's figures; `ctx`: { hourly_usd, gpu_count, share } where
-- share is this load's part of its machine's whole-life cost (all_in_cost, below), or nil.
-- Returns a table of the fields (nil where a figure has nothing to stand on).
function M.load_figures(m, ctx)
  ctx = ctx or {}
  local out_tokens, total_tokens = tokens(m)
  local f = {}
  local h, d = ctx.hourly_usd, m.duration
  if finite(h) and h >= 0 and positive(d) then
    f.cost_usd_steady = h * d / 3600
    f.usd_per_million_output_tokens = per_million(f.cost_usd_steady, out_tokens)
    f.usd_per_million_total_tokens = per_million(f.cost_usd_steady, total_tokens)
    -- Cost at the goodput SLO (a load with `slo`): only the requests that met it count, their
    -- share of the output taken as their share of the requests (equal-length replies, as with
    -- ignore_eos). Nil without an SLO; infinite cost (no good request) is nil too.
    if finite(m.request_goodput) and positive(m.request_throughput) and finite(out_tokens) then
      f.usd_per_million_good_output_tokens = per_million(f.cost_usd_steady, out_tokens * m.request_goodput / m.request_throughput)
    end
  end
  if finite(ctx.share) then
    f.cost_usd_all_in = ctx.share
    f.usd_per_million_output_tokens_all_in = per_million(ctx.share, out_tokens)
    f.usd_per_million_total_tokens_all_in = per_million(ctx.share, total_tokens)
  end
  if positive(ctx.gpu_count) then
    if finite(m.output_throughput) then f.output_tokens_per_s_per_gpu = m.output_throughput / ctx.gpu_count end
    if finite(m.total_token_throughput) then f.total_tokens_per_s_per_gpu = m.total_token_throughput / ctx.gpu_count end
  end
  if positive(m.median_tpot_ms) then f.interactivity_tokens_per_s_per_user = 1000 / m.median_tpot_ms end
  if positive(m.energy_j) then
    f.output_tokens_per_joule = finite(out_tokens) and out_tokens / m.energy_j or nil
    f.total_tokens_per_joule = finite(total_tokens) and total_tokens / m.energy_j or nil
  end
  return f
end

-- Each load's part of its machine's whole-life cost (`cost`, what the machine was billed until
-- the report was written: boot, model load, every load, the gaps), in proportion to the loads'
-- durations: the parts add up to the whole cost. `list`: the machine's loads' figures.
function M.shares(list, cost)
  local total = 0
  for _, m in ipairs(list) do if positive(m.duration) then total = total + m.duration end end
  local out = {}
  for i, m in ipairs(list) do
    if finite(cost) and total > 0 and positive(m.duration) then out[i] = cost * m.duration / total end
  end
  return out
end

-- The headline of one machine: its best load (highest output throughput; latency loads left
-- out) with that load's figures, and the whole run all-in (the machine's cost over every
-- token of every load). `entries`: { {name =, m =, kind =, f =}, ... } with f from load_figures.
function M.headline(entries, ctx)
  ctx = ctx or {}
  local best
  for _, e in ipairs(entries) do
    if e.kind ~= "latency" and finite(e.m.output_throughput) and (not best or e.m.output_throughput > best.m.output_throughput) then best = e end
  end
  local h = { price_usd_per_hour = finite(ctx.hourly_usd) and ctx.hourly_usd or nil,
              gpu_count = positive(ctx.gpu_count) and ctx.gpu_count or nil }
  if best then
    h.load = best.name
    for _, k in ipairs({ "usd_per_million_output_tokens", "usd_per_million_total_tokens", "output_tokens_per_s_per_gpu",
                         "total_tokens_per_s_per_gpu", "interactivity_tokens_per_s_per_user", "output_tokens_per_joule",
                         "total_tokens_per_joule" }) do
      h[k] = best.f[k]
    end
    h.output_tokens_per_s = best.m.output_throughput
    h.energy_source, h.energy_note = best.m.energy_source, best.m.energy_note
  end
  local out_sum, total_sum, any = 0, 0, false
  for _, e in ipairs(entries) do
    local o, t = tokens(e.m)
    if finite(o) then out_sum, any = out_sum + o, true end
    if finite(t) then total_sum = total_sum + t end
  end
  if finite(ctx.cost_usd) and any then
    h.all_in = { cost_usd = ctx.cost_usd, output_tokens = out_sum, total_tokens = total_sum,
                 usd_per_million_output_tokens = per_million(ctx.cost_usd, out_sum),
                 usd_per_million_total_tokens = per_million(ctx.cost_usd, total_sum),
                 cost_read = "when the report was written, before teardown" }
  end
  if not h.load and not h.all_in then return nil end
  if not finite(ctx.hourly_usd) then
    h.cost_note = "no hourly price for this machine (a machine runara did not rent: rep:metadata{ hourly_usd = ... } gives one)"
  end
  return h
end

return M
