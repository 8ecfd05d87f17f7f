-- runara.repeats: a load run K times, so that a figure comes with how much it moves between runs.
-- Each headline figure becomes the median of the K runs, with a 95 % confidence interval of their
-- mean by Student's t distribution (K - 1 degrees of freedom), as AIPerf reports its intervals:
-- mean ± t(0.975, K-1) · s / sqrt(K). With K = 1 there is no interval.
--
--   local repeats = require("runara.repeats")
--   local r = repeats.run(3, function(i) return http_load.run{ ..., name = "ttft-r" .. i } end)
--   r.median_ttft_ms                 --> the median of the three runs' medians
--   r.intervals.median_ttft_ms       --> { low = 88.1, high = 95.7, mean = 91.9, values = {…} }
--   r.repeats                        --> { count = 3, method = "…", runs = { label1, label2, label3 } }
local M = {}

-- The figures combined; the others are the last run's.
M.METRICS = { "request_throughput", "output_throughput", "total_token_throughput", "request_goodput",
  "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms",
  "mean_itl_ms", "median_itl_ms", "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms",
  "energy_j", "mean_power_w", "output_tokens_per_joule" }

M.METHOD = "median of the repeats; 95 % confidence interval of their mean by Student's t"

-- t(0.975, df) for df = 1 … 30 (the standard table, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2);
-- past 30 the normal 1.96 is within 2 %.
local T975 = { 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
  2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
  2.045, 2.042 }

function M.t975(df) return T975[df] or 1.96 end

local function median(sorted)
  local n = #sorted
  if n % 2 == 1 then return sorted[(n + 1) / 2] end
  return (sorted[n / 2] + sorted[n / 2 + 1]) / 2
end

-- { n, median, mean, sd, low, high, values } of a list of numbers (nil for an empty one); low and
-- high are nil for a single value.
function M.interval(values)
  if type(values) ~= "table" then error("repeats.interval: expected a list of numbers, got " .. type(values), 2) end
  local n, sum = #values, 0
  if n == 0 then return nil end
  local sorted = {}
  for i, v in ipairs(values) do
    if type(v) ~= "number" or v ~= v then error(("repeats.interval: item %d is %s, expected a number"):format(i, tostring(v)), 2) end
    sorted[i], sum = v, sum + v
  end
  table.sort(sorted)
  local mean = sum / n
  local out = { n = n, median = median(sorted), mean = mean, values = values }
  if n < 2 then return out end
  local ss = 0
  for _, v in ipairs(values) do ss = ss + (v - mean) ^ 2 end
  out.sd = math.sqrt(ss / (n - 1))
  local half = M.t975(n - 1) * out.sd / math.sqrt(n)
  out.low, out.high = mean - half, mean + half
  return out
end

-- What is wrong with a list of results (a message naming `fn`), or nil.
local function results_problem(fn, results)
  if type(results) ~= "table" or #results == 0 then return fn .. ": expected a list of http_load results" end
  for i, r in ipairs(results) do
    if type(r) ~= "table" then return string.format("%s: item %d is %s, expected an http_load result", fn, i, type(r)) end
  end
end

-- The K results (checked) as one; a figure that is not a number in every run (missing, or NaN)
-- is the last run's.
local function combine(results)
  local out = {}
  for k, v in pairs(results[#results]) do out[k] = v end
  out.intervals, out.repeats = {}, { count = #results, method = M.METHOD, runs = {} }
  for i, r in ipairs(results) do out.repeats.runs[i] = r.label end
  -- A gate (http_load's thresholds) crossed in any run is crossed for the load: each run's
  -- crossings, named by run, and the verdict of the first run that crossed it.
  local crossed, gates = {}, nil
  for _, r in ipairs(results) do
    for _, c in ipairs(type(r.thresholds_crossed) == "table" and r.thresholds_crossed or {}) do
      crossed[#crossed + 1] = (type(r.label) == "string" and (r.label .. " ") or "") .. tostring(c)
    end
    for name, t in pairs(type(r.thresholds) == "table" and r.thresholds or {}) do
      gates = gates or {}
      if gates[name] == nil or (gates[name].ok and type(t) == "table" and t.ok == false) then gates[name] = t end
    end
  end
  if gates then out.thresholds, out.thresholds_crossed = gates, crossed end
  for _, key in ipairs(M.METRICS) do
    local values = {}
    for _, r in ipairs(results) do if type(r[key]) == "number" and r[key] == r[key] then values[#values + 1] = r[key] end end
    if #values == #results then
      local ci = M.interval(values)
      out[key] = ci.median
      if ci.low then out.intervals[key] = { low = ci.low, high = ci.high, mean = ci.mean, values = values } end
    end
  end
  return out
end

-- The K results of one load as one: M.METRICS by their medians, `intervals` per figure, `repeats`.
function M.combine(results)
  local bad = results_problem("repeats.combine", results)
  if bad then error(bad, 2) end
  return combine(results)
end

-- Runs `load(i)` for i = 1 … count (each must return an http_load result) and combines them.
-- count 1 returns the one result as it is. `after_each(so_far, i)`, when given, gets the runs
-- finished so far combined (the first one alone) after each run: a report kept up to date
-- still has them when a later run is interrupted.
function M.run(count, load, after_each)
  if type(count) ~= "number" or count < 1 or count ~= math.floor(count) or count == math.huge then
    error("repeats.run: count must be a whole number >= 1, got " .. tostring(count), 2)
  end
  if type(load) ~= "function" then error("repeats.run: expected a function that runs one load, got " .. type(load), 2) end
  if after_each ~= nil and type(after_each) ~= "function" then
    error("repeats.run: after_each must be a function(so_far, i) or nil, got " .. type(after_each), 2)
  end
  local results, so_far = {}, nil
  for i = 1, count do
    results[i] = load(i)
    if type(results[i]) ~= "table" then
      error(string.format("repeats.run: load(%d) returned %s, expected an http_load result", i, type(results[i])), 2)
    end
    so_far = i == 1 and results[1] or combine(results)
    if after_each then after_each(so_far, i) end
  end
  return so_far
end

return M
