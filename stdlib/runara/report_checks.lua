-- runara.report_checks: what is wrong with the arguments of the report's methods and of a
-- machine's view of it (a message), or nil. The helpers only build messages: each method raises
-- them itself with level 2 (runara.errors' convention), so the error carries the line that called
-- the method, also when a machine's view passes the call on to the report's own method
-- (report_machine.lua checks first, with the machine option it adds, then calls the report's).
local references = require("runara.reference_numbers")

local M = {}

-- The kinds of load rep:add_load takes.
M.KINDS = { throughput = true, latency = true, concurrent = true, load = true }

local function msg(fn, fmt, ...) return "report" .. fn .. ": " .. string.format(fmt, ...) end
M.message = msg

-- report.new's options.
function M.new(opts)
  opts = opts or {}
  if type(opts) ~= "table" then return msg(".new", "options must be a table, got %s", type(opts)) end
  if opts.reference ~= nil and not references[opts.reference] then
    return msg(".new", "unknown reference '%s' (see stdlib/runara/reference_numbers.lua)", tostring(opts.reference))
  end
end

-- The machine record (rep:machine's) that option `machine` names, or nil; M.options checked it.
function M.machine_of(self, opts)
  local key = opts and opts.machine
  if key == nil then return nil end
  return self.machines[self.machine_index and self.machine_index[key] or 0]
end

-- An option table that may name the machine (rep:machine's key) the data belongs to.
function M.options(self, fn, opts)
  if opts ~= nil and type(opts) ~= "table" then return msg(fn, "options must be a table, got %s", type(opts)) end
  local key = opts and opts.machine
  if key ~= nil and not M.machine_of(self, opts) then
    return msg(fn, "option 'machine': no machine '%s' (declare it first with rep:machine(\"%s\", { label = ... }))",
      tostring(key), tostring(key))
  end
end

-- rep:headline's arguments.
function M.headline(label, value, unit, opts)
  if type(label) ~= "string" or label == "" then return msg(":headline", "argument 'label' must be a non-empty string") end
  local finite_number = type(value) == "number" and value == value and value ~= math.huge and value ~= -math.huge
  if not finite_number and type(value) ~= "string" then
    return msg(":headline", "argument 'value' of '%s' must be a finite number or a string, got %s", label, tostring(value))
  end
  if unit ~= nil and type(unit) ~= "string" then return msg(":headline", "argument 'unit' must be a string or nil") end
  if opts ~= nil and type(opts) ~= "table" then return msg(":headline", "options must be a table, got %s", type(opts)) end
  local d = opts and opts.digits
  if d ~= nil and (type(d) ~= "number" or d < 0 or d > 6 or d ~= math.floor(d)) then
    return msg(":headline", "option 'digits' must be an integer from 0 to 6")
  end
end

-- rep:metadata's and rep:manifest's fields.
function M.fields(fn, fields)
  if type(fields) ~= "table" then return msg(fn, "argument must be a table of fields") end
end

function M.bill(self, d, opts)
  if type(d) ~= "userdata" and type(d) ~= "table" then return msg(":bill", "argument must be a droplet") end
  return M.options(self, ":bill", opts)
end

function M.add_load(self, res, opts)
  if type(res) ~= "table" then return msg(":add_load", "argument 'result' must be an http_load.run result, got %s", type(res)) end
  local problem = M.options(self, ":add_load", opts)
  if problem then return problem end
  local kind = opts and opts.kind or "load"
  if not M.KINDS[kind] then return msg(":add_load", "option 'kind' must be throughput, latency, concurrent or load, got %s", tostring(kind)) end
end

function M.add_sweep(self, list, opts)
  if type(list) ~= "table" then return msg(":add_sweep", "argument 'results' must be a list of http_load results") end
  return M.options(self, ":add_sweep", opts)
end

function M.add_gpu(self, res, opts)
  if type(res) ~= "table" then return msg(":add_gpu", "argument must be what a gpu_metrics sampler's stop() returns") end
  return M.options(self, ":add_gpu", opts)
end

function M.add_server_metrics(self, res, opts)
  if type(res) ~= "table" then return msg(":add_server_metrics", "argument must be what a metrics sampler's stop() returns") end
  return M.options(self, ":add_server_metrics", opts)
end

function M.add_table(self, t, opts)
  if type(t) ~= "table" or type(t.columns) ~= "table" or type(t.rows) ~= "table" then
    return msg(":add_table", "argument must be { columns = {...}, rows = { {...}, ... } }")
  end
  return M.options(self, ":add_table", opts)
end

function M.add_chart(self, c, opts)
  if type(c) ~= "table" or type(c.series) ~= "table" then
    return msg(":add_chart", "argument must be { series = { { name =, points = { {x, y}, ... } }, ... }, x_label =, y_label = }")
  end
  for i, sr in ipairs(c.series) do
    if type(sr) ~= "table" or type(sr.points) ~= "table" then return msg(":add_chart", "series %d has no points list", i) end
  end
  return M.options(self, ":add_chart", opts)
end

function M.add_file(path)
  if type(path) ~= "string" or path == "" then return msg(":add_file", "argument 'path' must be a path in the output folder") end
end

-- rep:set's and a view's set's path: a dotted name with at least one part (report_dotted_path.lua).
function M.path(path)
  if not tostring(path):find("[^%.]") then return msg(":set", "argument 'path' must be a dotted name such as benchmarks.mlperf") end
end

-- rep:machine's key and options.
function M.machine(key, opts)
  if type(key) ~= "string" or not key:match("^[%w_%-%.]+$") then
    return msg(":machine", "argument 'key' must be a name of letters, digits, '_', '-' or '.', got %s", tostring(key))
  end
  if opts ~= nil and type(opts) ~= "table" then return msg(":machine", "options must be a table, got %s", type(opts)) end
end

-- rep:run's and a view's run's body (and rep:run's after).
function M.run(body, after)
  if type(body) ~= "function" then return msg(":run", "argument 'body' must be a function, got %s", type(body)) end
  if after ~= nil and type(after) ~= "function" then
    return msg(":run", "argument 'after' must be a function(paths) or nil, got %s", type(after))
  end
end

-- rep:summary's paths (what rep:write() returns), or nil.
function M.summary(paths)
  if paths ~= nil and (type(paths) ~= "table" or type(paths.html) ~= "string") then
    return msg(":summary", "argument 'paths' must be what rep:write() returns (or nil), got %s", type(paths))
  end
end

return M
