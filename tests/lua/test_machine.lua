-- runara.machine: describe's argument error points at this file's line; the versions are read
-- from the tools' own output layouts (those of the simulated machine's shims, sim/machine/bin/,
-- which follow the recorded outputs in tests/fixtures/gpu/), given by a fake session.
local t = require("t")
local machine = require("runara.machine")

local HERE = "test_machine.lua:%d+:"

-- A stand-in for an ssh session whose exec prints `stdout` whatever the command.
local function fake_session(stdout)
  local s = { name = "fake", commands = {} }
  function s:exec(cmd, opts)
    self.commands[#self.commands + 1] = { cmd = cmd, opts = opts }
    return { stdout = stdout, stderr = "", exit_code = 0 }
  end
  return s
end

local AMD = "AMDSMI Tool: 24.6.3+9578815 | AMDSMI Library version: 24.6.3.0 | ROCm version: 6.2.0\n" ..
            "OS: Ubuntu 22.04.4 LTS\n"
local NVIDIA = "Mon Jan  5 10:00:00 2026\n" ..
  "+-----------------------------------------------------------------------------------------+\n" ..
  "| NVIDIA-SMI 590.48.01              Driver Version: 590.48.01      CUDA Version: 13.1     |\n" ..
  "|-----------------------------------------+------------------------+----------------------+\n" ..
  "OS: Ubuntu 24.04.1 LTS\n"

t.test("describe: the argument must be a session", function()
  t.raises(function() machine.describe() end, "machine.describe: argument 'session' must be an ssh session (ssh.connect), got nil", HERE)
  t.raises(function() machine.describe("root@10.0.0.1") end, "got \"root@10.0.0.1\"", HERE)
  t.raises(function() machine.describe({}) end, "argument 'session' must be an ssh session", HERE)
  t.raises(function() machine.describe({ exec = "x" }) end, "argument 'session'", HERE)
end)

t.test("describe: AMD versions from amd-smi version and os-release", function()
  local s = fake_session(AMD)
  local info = machine.describe(s)
  t.eq(info.rocm_version, "6.2.0")
  t.eq(info.amdsmi_version, "24.6.3+9578815")
  t.eq(info.cuda_version, nil)
  t.eq(info.os, "Ubuntu 22.04.4 LTS")
  t.eq(#s.commands, 1)
  t.eq(s.commands[1].opts.quiet, true)
  t.eq(s.commands[1].opts.check, false)
end)

t.test("describe: NVIDIA's CUDA version from nvidia-smi's header", function()
  local info = machine.describe(fake_session(NVIDIA))
  t.eq(info.cuda_version, "13.1")
  t.eq(info.rocm_version, nil)
  t.eq(info.amdsmi_version, nil)
  t.eq(info.os, "Ubuntu 24.04.1 LTS")
end)

t.test("describe: what cannot be read is nil, never a guess", function()
  local info = machine.describe(fake_session(""))
  t.eq(info.rocm_version, nil)
  t.eq(info.cuda_version, nil)
  t.eq(info.os, nil)
  -- gpu_metrics.read refuses a table that is no ssh session: its error is kept, the GPU facts stay nil.
  t.eq(info.gpu, nil)
  t.eq(info.gpu_count, nil)
  t.match(info.gpu_error, "gpu_metrics.read")
end)

t.done()
