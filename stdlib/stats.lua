-- stats: small statistics for scenario scripts (numbers measured in Lua, e.g. per-step timings).
-- The heavy, high-volume metrics live in C++ (http_load); this is for the handful a script keeps.
--
--   local stats = require "stats"
--   local s = stats.summary({ 1.2, 0.9, 1.1 })   --> { n=3, mean=1.066.., min=0.9, max=1.2, p50=1.1, ... }

local stats = {}

local function check_list(values, fn)
  if type(values) ~= "table" then
    error(("stats.%s: expected a list of numbers, got %s"):format(fn, type(values)), 3)
  end
  for i = 1, #values do
    if type(values[i]) ~= "number" then
      error(("stats.%s: item %d is %s, expected a number"):format(fn, i, type(values[i])), 3)
    end
  end
end

local function sorted_copy(values)
  local copy = {}
  for i = 1, #values do copy[i] = values[i] end
  table.sort(copy)
  return copy
end

function stats.mean(values)
  check_list(values, "mean")
  if #values == 0 then return nil end
  local sum = 0
  for i = 1, #values do sum = sum + values[i] end
  return sum / #values
end

-- Percentile q in [0, 100] with linear interpolation between closest ranks (numpy's default).
local function percentile_of_sorted(sorted, q)
  local n = #sorted
  if n == 0 then return nil end
  local rank = (q / 100) * (n - 1) + 1
  local lower = math.floor(rank)
  local upper = math.min(lower + 1, n)
  return sorted[lower] + (sorted[upper] - sorted[lower]) * (rank - lower)
end

function stats.percentile(values, q)
  check_list(values, "percentile")
  if type(q) ~= "number" or q < 0 or q > 100 then
    error("stats.percentile: q must be a number from 0 to 100, got " .. tostring(q), 2)
  end
  return percentile_of_sorted(sorted_copy(values), q)
end

function stats.summary(values)
  check_list(values, "summary")
  local n = #values
  if n == 0 then return { n = 0 } end
  local sorted = sorted_copy(values)
  local mean = stats.mean(values)
  local squares = 0
  for i = 1, n do squares = squares + (values[i] - mean) ^ 2 end
  return {
    n = n, mean = mean, std = math.sqrt(squares / n), min = sorted[1], max = sorted[n],
    p50 = percentile_of_sorted(sorted, 50), p90 = percentile_of_sorted(sorted, 90),
    p95 = percentile_of_sorted(sorted, 95), p99 = percentile_of_sorted(sorted, 99),
  }
end

return stats
