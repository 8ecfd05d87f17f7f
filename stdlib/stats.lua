-- stats: small statistics for scenario scripts (numbers measured in Lua, e.g. per-step timings).
-- The heavy, high-volume metrics live in C++ (http_load); this is for the handful a script keeps.
--
--   local stats = require "stats"
--   local s = stats.summary({ 1.2, 0.9, 1.1 })   --> { n=3, mean=1.066.., min=0.9, max=1.2, p50=1.1, ... }

local stats = {}

-- What is wrong with a list argument (a message), or nil. The public function raises it itself
-- with level 2, so the error carries the caller's line (runara.errors' convention).
local function list_problem(values, fn)
  if type(values) ~= "table" then
    return ("stats.%s: expected a list of numbers, got %s"):format(fn, type(values))
  end
  for i = 1, #values do
    if type(values[i]) ~= "number" then
      return ("stats.%s: item %d is %s, expected a number"):format(fn, i, type(values[i]))
    end
  end
end

local function mean(values)
  if #values == 0 then return nil end
  local sum = 0
  for i = 1, #values do sum = sum + values[i] end
  return sum / #values
end

local function sorted_copy(values)
  local copy = {}
  for i = 1, #values do copy[i] = values[i] end
  table.sort(copy)
  return copy
end

function stats.mean(values)
  local bad = list_problem(values, "mean")
  if bad then error(bad, 2) end
  return mean(values)
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
  local bad = list_problem(values, "percentile")
  if bad then error(bad, 2) end
  if type(q) ~= "number" or q < 0 or q > 100 then
    error("stats.percentile: q must be a number from 0 to 100, got " .. tostring(q), 2)
  end
  return percentile_of_sorted(sorted_copy(values), q)
end

function stats.summary(values)
  local bad = list_problem(values, "summary")
  if bad then error(bad, 2) end
  local n = #values
  if n == 0 then return { n = 0 } end
  local sorted = sorted_copy(values)
  local m = mean(values)
  local squares = 0
  for i = 1, n do squares = squares + (values[i] - m) ^ 2 end
  return {
    n = n, mean = m, std = math.sqrt(squares / n), min = sorted[1], max = sorted[n],
    p50 = percentile_of_sorted(sorted, 50), p90 = percentile_of_sorted(sorted, 90),
    p95 = percentile_of_sorted(sorted, 95), p99 = percentile_of_sorted(sorted, 99),
  }
end

return stats
