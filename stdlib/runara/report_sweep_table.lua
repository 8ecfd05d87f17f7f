-- runara.report_sweep_table: a sweep's table as files, like http_load's own for a list of
-- concurrencies (same columns): NAME.json (a list, one object per point) and NAME.csv.
local M = {}

local finite = require("runara.report_format").finite

local SWEEP_COLUMNS = { "label", "load_model", "max_concurrency", "request_rate", "num_prompts", "completed", "failed",
  "duration", "request_throughput", "request_goodput", "output_throughput", "total_token_throughput",
  "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms",
  "mean_itl_ms", "median_itl_ms", "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms",
  "max_concurrent_requests", "total_input_tokens", "total_output_tokens" }

local function csv_cell(v)
  if v == nil then return "" end
  if type(v) == "number" then
    if not finite(v) then return "" end
    if v == math.floor(v) and math.abs(v) < 2^53 then return string.format("%d", v) end
    return string.format("%.12g", v)
  end
  local text = tostring(v)
  if not text:find('[,"\r\n]') then return text end
  return '"' .. text:gsub('"', '""') .. '"'
end

-- A sweep's rows as written to NAME.json, and its CSV text (pure).
local function rows_of(list)
  local rows, lines = {}, { table.concat(SWEEP_COLUMNS, ",") .. ",thresholds_crossed" }
  for _, res in ipairs(list) do
    if type(res) == "table" then
      local row, cells = {}, {}
      for _, c in ipairs(SWEEP_COLUMNS) do
        local v = res[c]
        if type(v) == "number" and not finite(v) then v = nil end
        if type(v) ~= "number" and type(v) ~= "string" then v = nil end
        row[c] = v
        cells[#cells + 1] = csv_cell(v)
      end
      row.thresholds_crossed = type(res.thresholds_crossed) == "table" and #res.thresholds_crossed or 0
      cells[#cells + 1] = tostring(row.thresholds_crossed)
      rows[#rows + 1] = row
      lines[#lines + 1] = table.concat(cells, ",")
    end
  end
  return rows, table.concat(lines, "\n") .. "\n"
end

-- report.sweep_table(results): the same, the argument checked at the caller's line.
function M.rows(list)
  if type(list) ~= "table" then error("report.sweep_table: argument 'results' must be a list of http_load results, got " .. type(list), 2) end
  return rows_of(list)
end

-- Writes BASE.json and BASE.csv into the output folder.
function M.write(base, list)
  local rows, csv = rows_of(list)
  runara.write_file(base .. ".json", rows)
  runara.write_file(base .. ".csv", csv)
end

return M
