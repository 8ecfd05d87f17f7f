-- runara.report_machine: one machine of a report (a comparison), rep:machine(key, {label =}) →
-- a view with the report's methods for that machine; its loads, GPU samples, server metrics,
-- cost and failure stay its own. See report.lua.
local dotted_path = require("runara.report_dotted_path")
local checks = require("runara.report_checks")

local M = {}
local Machine = {}
Machine.__index = Machine

-- Argument errors are raised by each method itself with level 2, at the line that called it: a
-- view checks what the report's method would refuse (report_checks.lua, with the machine option
-- it adds) before passing the call on, so the error never points at this file.

-- Declares a machine of the report (or returns the one declared under `key`). Options: label
-- (what tables and charts call it; default the key), and any metadata (gpu, size, ...).
-- The report's method rep:machine.
function M.machine(self, key, opts)
  local bad = checks.machine(key, opts)
  if bad then error(bad, 2) end
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
  local bad = checks.fields(":metadata", fields)
  if bad then error(bad, 2) end
  for k, v in pairs(fields) do self.record.meta[tostring(k)] = v end
end
function Machine:bill(d)
  local o = { machine = self.key }
  local bad = checks.bill(self.report, d, o)
  if bad then error(bad, 2) end
  return self.report:bill(d, o)
end
function Machine:phase(name)
  name = tostring(name)
  local r = self.record
  r.phases[#r.phases + 1] = { name = name, t_s = runara.now() - self.report.started }
  if self.gpu_sampler then pcall(function() self.gpu_sampler:mark(name) end) end
end
-- The caller's options with this machine's key; nil and the message when they are no table.
local function with_machine(self, fn, opts)
  if opts ~= nil and type(opts) ~= "table" then return nil, checks.message(fn, "options must be a table, got %s", type(opts)) end
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.machine = self.key
  return o
end
function Machine:add_load(name, res, opts)
  local o, bad = with_machine(self, ":add_load", opts)
  bad = bad or checks.add_load(self.report, res, o)
  if bad then error(bad, 2) end
  return self.report:add_load(name, res, o)
end
function Machine:add_sweep(name, list, opts)
  local o, bad = with_machine(self, ":add_sweep", opts)
  bad = bad or checks.add_sweep(self.report, list, o)
  if bad then error(bad, 2) end
  return self.report:add_sweep(name, list, o)
end
function Machine:add_gpu(res)
  local o = { machine = self.key }
  local bad = checks.add_gpu(self.report, res, o)
  if bad then error(bad, 2) end
  return self.report:add_gpu(res, o)
end
function Machine:add_server_metrics(res)
  local o = { machine = self.key }
  local bad = checks.add_server_metrics(self.report, res, o)
  if bad then error(bad, 2) end
  return self.report:add_server_metrics(res, o)
end
function Machine:add_table(name, t)
  local o = { machine = self.key }
  local bad = checks.add_table(self.report, t, o)
  if bad then error(bad, 2) end
  return self.report:add_table(name, t, o)
end
function Machine:add_file(path, what)
  local bad = checks.add_file(path)
  if bad then error(bad, 2) end
  return self.report:add_file(path, what)
end
-- results.json's machines.KEY.PATH.
function Machine:set(path, value)
  local bad = checks.path(path)
  if bad then error(bad, 2) end
  dotted_path.set(self.record.extra, path, value)
end
-- This machine failed: its column says so, the report is PARTIAL; the other machines' results stay.
function Machine:fail(message) self.record.error = tostring(message) end
-- Runs body(view) for this machine; an error is kept as the machine's failure (with the GPU
-- samples taken so far) instead of ending the run. Returns true and body's value, or false and the error.
function Machine:run(body)
  local bad = checks.run(body)
  if bad then error(bad, 2) end
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
