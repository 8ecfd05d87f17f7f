-- runara.report_machine: one machine of a report (a comparison), rep:machine(key, {label =}) →
-- a view with the report's methods for that machine; its loads, GPU samples, server metrics,
-- cost and failure stay its own. See report.lua.
local dotted_path = require("runara.report_dotted_path")

local M = {}
local Machine = {}
Machine.__index = Machine

local function fail(fn, fmt, ...) error("report" .. fn .. ": " .. string.format(fmt, ...), 3) end

-- Declares a machine of the report (or returns the one declared under `key`). Options: label
-- (what tables and charts call it; default the key), and any metadata (gpu, size, ...).
-- The report's method rep:machine.
function M.machine(self, key, opts)
  if type(key) ~= "string" or not key:match("^[%w_%-%.]+$") then
    fail(":machine", "argument 'key' must be a name of letters, digits, '_', '-' or '.', got %s", tostring(key))
  end
  if opts ~= nil and type(opts) ~= "table" then fail(":machine", "options must be a table, got %s", type(opts)) end
  self.machine_index = self.machine_index or {}
  local m = self.machines[self.machine_index[key] or 0]
  if not m then
    m = { key = key, label = key, meta = {}, billed = {}, phases = {}, extra = {} }
    self.machines[#self.machines + 1] = m
    self.machine_index[key] = #self.machines
    self.machine_views[key] = setmetatable({ report = self, key = key, record = m }, Machine)
  end
  for k, v in pairs(opts or {}) do
    if k == "label" then m.label = tostring(v) else m.meta[tostring(k)] = v end
  end
  return self.machine_views[key]
end

function Machine:metadata(fields)
  if type(fields) ~= "table" then fail(":metadata", "argument must be a table of fields") end
  for k, v in pairs(fields) do self.record.meta[tostring(k)] = v end
end
function Machine:bill(d) return self.report:bill(d, { machine = self.key }) end
function Machine:phase(name)
  name = tostring(name)
  local r = self.record
  r.phases[#r.phases + 1] = { name = name, t_s = runara.now() - self.report.started }
  if self.gpu_sampler then pcall(function() self.gpu_sampler:mark(name) end) end
end
local function with_machine(self, opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.machine = self.key
  return o
end
function Machine:add_load(name, res, opts)
  if opts ~= nil and type(opts) ~= "table" then fail(":add_load", "options must be a table, got %s", type(opts)) end
  return self.report:add_load(name, res, with_machine(self, opts))
end
function Machine:add_sweep(name, list, opts) return self.report:add_sweep(name, list, with_machine(self, opts)) end
function Machine:add_gpu(res) return self.report:add_gpu(res, { machine = self.key }) end
function Machine:add_server_metrics(res) return self.report:add_server_metrics(res, { machine = self.key }) end
function Machine:add_table(name, t) return self.report:add_table(name, t, { machine = self.key }) end
function Machine:add_file(path, what) return self.report:add_file(path, what) end
-- results.json's machines.KEY.PATH.
function Machine:set(path, value)
  if not dotted_path.set(self.record.extra, path, value) then fail(":set", "argument 'path' must be a dotted name such as benchmarks.mlperf") end
end
-- This machine failed: its column says so, the report is PARTIAL; the other machines' results stay.
function Machine:fail(message) self.record.error = tostring(message) end
-- Runs body(view) for this machine; an error is kept as the machine's failure (with the GPU
-- samples taken so far) instead of ending the run. Returns true and body's value, or false and the error.
function Machine:run(body)
  local ok, res = pcall(body, self)
  if not ok then
    if self.gpu_sampler then
      pcall(function() self:add_gpu(self.gpu_sampler:stop()) end)
      self.gpu_sampler = nil
    end
    self:fail(res)
  end
  return ok, res
end

return M
