-- runara.gemm: the output of scripts/gemm/gemm_bench.py (one JSON object per line, per shape
-- and dtype: m, n, k, name, dtype, median_ms, tflops, ...) read into results and table rows.
-- Lines that are not such an object (the container's own chatter) are skipped.
--
--   local results, rows = require("runara.gemm").parse(stdout)
--   print(results[1].tflops, rows[1][5])
local M = {}

local function number(line, key)
  local v = tonumber(line:match('"' .. key .. '"%s*:%s*(%-?[%d%.eE%+%-]+)'))
  if v and v == v and v ~= math.huge and v ~= -math.huge then return v end
  return nil
end

function M.parse(text)
  if type(text) ~= "string" then error("gemm.parse: argument 'text' must be a string, got " .. type(text), 2) end
  local results, rows = {}, {}
  for line in text:gmatch("[^\n]+") do
    if line:match("^%s*{") then
      local r = { m = number(line, "m"), n = number(line, "n"), k = number(line, "k"),
                  name = line:match('"name"%s*:%s*"([^"]*)"'), dtype = line:match('"dtype"%s*:%s*"(%w+)"'),
                  median_ms = number(line, "median_ms"), tflops = number(line, "tflops") }
      if r.m and r.n and r.k and r.dtype and r.tflops and r.tflops >= 0 then
        results[#results + 1] = r
        rows[#rows + 1] = { string.format("(%d, %d, %d)", r.m, r.n, r.k), r.name or "", r.dtype,
                            r.median_ms and string.format("%.3f", r.median_ms) or "?", string.format("%.0f", r.tflops) }
      end
    end
  end
  return results, rows
end

-- The best TFLOPS per dtype.
function M.peaks(results)
  if type(results) ~= "table" then error("gemm.peaks: argument 'results' must be what gemm.parse returns, got " .. type(results), 2) end
  for i, x in ipairs(results) do
    if type(x) ~= "table" or type(x.dtype) ~= "string" or type(x.tflops) ~= "number" then
      error(string.format("gemm.peaks: item %d of 'results' is not a gemm.parse result (dtype, tflops)", i), 2)
    end
  end
  local best = {}
  for _, x in ipairs(results) do best[x.dtype] = math.max(best[x.dtype] or 0, x.tflops) end
  return best
end

return M
