-- runara.comparison: how one figure compares with another, the same rule wherever two figures are
-- set side by side: `runara compare` (runs against a baseline run, run_comparison.lua) and a
-- scenario's report of several machines (report_machine_comparison.lua: MI300X against H100).
--
--   comparison.verdict(100, 94, "higher")              --> "worse", -6, "beyond the ±2 % noise band"
--   comparison.verdict(100, 101, "higher")             --> "within noise", 1, ...
--   comparison.verdict(100, 94, "higher", { base_interval = {90, 110}, interval = {88, 99} })
--                                                      --> "within noise", -6, "the intervals overlap"
--
-- Which way is better comes with the figure (`better` = "higher" or "lower": throughput up,
-- latency down, USD per million tokens down, tokens per joule up); a figure without a direction
-- (power, VRAM) gets a difference and no verdict. When both figures carry an interval (repeats'
-- confidence intervals), overlapping intervals are "within noise"; otherwise a difference within
-- the noise band (NOISE_PCT, default 2 %) is: a single measurement says nothing finer.
local M = {}

M.NOISE_PCT = 2

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

-- (value - base) / |base| in percent; nil when either is missing or base is 0.
function M.difference_pct(base, value)
  if not (finite(base) and finite(value)) or base == 0 then return nil end
  local pct = (value - base) / math.abs(base) * 100
  return finite(pct) and pct or nil
end

-- The difference turned so that positive is better (for a `better` = "lower" figure, a fall).
function M.gain_pct(pct, better)
  if pct == nil or better == nil then return nil end
  return better == "lower" and -pct or pct
end

-- An interval as { low, high } (or { low =, high = }); nil when it is not one.
function M.interval(v)
  if type(v) ~= "table" then return nil end
  local lo, hi = v.low or v[1], v.high or v[2]
  if finite(lo) and finite(hi) and lo <= hi then return { lo, hi } end
  return nil
end

-- verdict, difference in %, and the basis of the verdict. Verdicts: "better", "worse",
-- "within noise"; nil (no verdict) for a figure without a direction or a missing value.
-- opts: noise_pct, base_interval, interval.
function M.verdict(base, value, better, opts)
  opts = opts or {}
  local pct = M.difference_pct(base, value)
  if pct == nil and finite(base) and base == value then pct = 0 end  -- 0 against 0 (no failed requests in either)
  if pct == nil then return nil, nil, nil end
  if better ~= "higher" and better ~= "lower" then return nil, pct, "no better direction" end
  local a, b = M.interval(opts.base_interval), M.interval(opts.interval)
  if a and b then
    if a[1] <= b[2] and b[1] <= a[2] then return "within noise", pct, "the intervals overlap" end
    return (M.gain_pct(pct, better) > 0) and "better" or "worse", pct, "the intervals do not overlap"
  end
  local band = finite(opts.noise_pct) and opts.noise_pct or M.NOISE_PCT
  local basis = string.format("the ±%s %% noise band", (band == math.floor(band)) and string.format("%d", band) or string.format("%g", band))
  if math.abs(pct) <= band then return "within noise", pct, "within " .. basis end
  return (M.gain_pct(pct, better) > 0) and "better" or "worse", pct, "beyond " .. basis
end

-- "+5.2 %, better", "-0.4 %, within noise", "+3.0 %" (no direction), or "—".
function M.text(verdict, pct)
  if pct == nil then return "—" end
  local d = string.format("%+.1f %%", pct)
  if math.abs(pct) >= 1e6 then d = string.format("%+.3g %%", pct) end
  return verdict and (d .. ", " .. verdict) or d
end

return M
