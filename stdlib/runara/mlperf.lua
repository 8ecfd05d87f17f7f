-- runara.mlperf: MLPerf LoadGen's mlperf_log_summary.txt read into a table.
--
--   local summary = require("runara.mlperf").parse(text)
--   print(summary.scenario, summary.valid, summary.tokens_per_second)
--
-- Keys: sut_name, scenario, mode, samples_per_second, tokens_per_second (Offline's "Samples per
-- second"/"Tokens per second" and Server's "Completed samples/tokens per second" alike),
-- result ("VALID"/"INVALID"), valid (boolean), latencies_ns (the "Additional Stats" lines in
-- nanoseconds, e.g. ["99.00 percentile latency (ns)"]), parameters (the "Test Parameters Used" lines), and
-- `fields` with every "name : value" line as written. Unknown lines are kept in `fields`.
local M = {}

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

function M.parse(text)
  if type(text) ~= "string" then error("mlperf.parse: argument 'text' must be the text of mlperf_log_summary.txt", 2) end
  local out = { fields = {}, latencies_ns = {}, parameters = {} }
  local section = "results"
  for line in text:gmatch("[^\r\n]+") do
    if line:match("^Additional Stats") then section = "stats"
    elseif line:match("^Test Parameters Used") then section = "parameters"
    else
      local name, value = line:match("^%s*([^:]-)%s*:%s*(.-)%s*$")
      if name and name ~= "" and not line:match("^=+$") then
        name = trim(name)
        out.fields[name] = value
        local n = tonumber(value)
        if section == "stats" and n and name:find("(ns)", 1, true) then out.latencies_ns[name] = n
        elseif section == "parameters" then out.parameters[name] = n or value end
      end
    end
  end
  local f = out.fields
  out.sut_name, out.scenario, out.mode, out.result = f["SUT name"], f["Scenario"], f["Mode"], f["Result is"]
  out.samples_per_second = tonumber(f["Samples per second"] or f["Completed samples per second"])
  out.tokens_per_second = tonumber(f["Tokens per second"] or f["Completed tokens per second"])
  out.valid = out.result == "VALID"
  if not out.scenario or not (out.samples_per_second or out.tokens_per_second) then
    error("mlperf.parse: not an mlperf_log_summary.txt (no Scenario or no samples/tokens per second line)", 2)
  end
  return out
end

return M
