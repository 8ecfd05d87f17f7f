-- runara.machine: describe's argument error points at this file's line; the versions are read
-- from the tools' own output layouts (those of the simulated machine's shims, sim/machine/bin/,
-- which follow the recorded outputs in tests/fixtures/gpu/), given by a fake session. The run's
-- working folders (workdir, remove_workdir): the commands they send and the paths they accept;
-- tests/end_to_end/test_scenarios_where.cpp runs them on a real machine (files a user already had
-- in ~/gemm, ~/training, ~/mlperf, ~/finetune are left byte for byte).
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

-- A session whose exec answers each command with `answer(cmd)` (stdout, code, stderr).
local function scripted_session(answer)
  local s = { name = "fake", commands = {} }
  function s:exec(cmd, opts)
    self.commands[#self.commands + 1] = { cmd = cmd, opts = opts }
    local stdout, code, stderr = answer(cmd)
    return { stdout = stdout or "", stderr = stderr or "", code = code or 0 }
  end
  return s
end

local HOME = "/home/you"
local function made(name, letters) return HOME .. "/.cache/runara/runs/" .. runara.run_id .. "-" .. name .. "." .. (letters or "Ab3dE6gH") end

t.test("workdir: a new folder of mktemp -d under ~/.cache/runara/runs, private, named for the run", function()
  local s = scripted_session(function() return made("gemm") .. "\n" end)
  t.eq(machine.workdir(s, "gemm"), made("gemm"))
  t.eq(#s.commands, 1)
  local cmd = s.commands[1].cmd
  -- Made by mktemp (a name that cannot have existed), never `mkdir -p NAME` of a name the user may have.
  t.match(cmd, "^umask 077 && ", "0700 for the folder and runara's folders above it where they are new")
  t.match(cmd, 'mkdir %-p "%$HOME"/%.cache/runara/runs && ', "runara's own parent folder")
  t.match(cmd, 'mktemp %-d "%$HOME"/%.cache/runara/runs/' .. runara.run_id .. "%-gemm%.XXXXXXXX$")
  t.no_match(cmd, "rm ")
  t.eq(s.commands[1].opts.quiet, true)
  t.eq(s.commands[1].opts.check, false)
end)

t.test("workdir: mktemp's failure is said with the machine, the folder and mktemp's own words", function()
  local s = scripted_session(function() return "", 1, "mktemp: failed to create directory via template: No space left on device\n" end)
  t.raises(function() machine.workdir(s, "mlperf") end,
    "machine.workdir: could not make a working folder under ~/.cache/runara/runs on fake (exit 1): mktemp: failed to create " ..
    "directory via template: No space left on device", HERE)
end)

t.test("workdir: a path no command line or container mount could carry is refused, not used", function()
  for _, home in ipairs({ "/home/a:b", "/home/it's", "/home/$x", "/home/back\\slash" }) do
    local s = scripted_session(function() return home .. "/.cache/runara/runs/" .. runara.run_id .. "-gemm.Ab3dE6gH\n" end)
    t.raises(function() machine.workdir(s, "gemm") end, "has a character (quote, backslash, $, `, :) runara cannot pass on", HERE)
  end
  -- Output that is not the folder asked for (another name, a relative path) is no working folder either.
  for _, out in ipairs({ made("other"), "tmp.Ab3dE6gH", "" }) do
    local s = scripted_session(function() return out .. "\n" end)
    t.raises(function() machine.workdir(s, "gemm") end, "machine.workdir: could not make a working folder", HERE)
  end
end)

t.test("workdir: bad arguments are refused at this line before any command", function()
  local s = scripted_session(function() error("no command may run") end)
  t.raises(function() machine.workdir(s, "../gemm") end, "machine.workdir: argument 'name' must be up to 64 letters, digits, '-', '_' or '.', got \"../gemm\"", HERE)
  t.raises(function() machine.workdir(s, "") end, "argument 'name'", HERE)
  t.raises(function() machine.workdir(s, "a b") end, "argument 'name'", HERE)
  t.raises(function() machine.workdir(s, string.rep("x", 65)) end, "argument 'name'", HERE)
  t.raises(function() machine.workdir(s) end, "argument 'name'", HERE)
  t.raises(function() machine.workdir(nil, "gemm") end, "machine.workdir: argument 'session' must be an ssh session (ssh.connect), got nil", HERE)
  t.eq(#s.commands, 0)
end)

t.test("workdir: try_workdir returns nil and why instead of raising", function()
  local dir, why = machine.try_workdir(scripted_session(function() return "", 1, "mktemp: nope" end), "x")
  t.eq(dir, nil)
  t.eq(why, "could not make a working folder under ~/.cache/runara/runs on fake (exit 1): mktemp: nope")
end)

t.test("remove_workdir: removes that exact folder (quoted), then runara's runs folder only if empty", function()
  local s = scripted_session(function() return "" end)
  machine.remove_workdir(s, made("gemm"))
  t.eq(#s.commands, 1)
  t.eq(s.commands[1].cmd, "rm -rf -- '" .. made("gemm") .. "'; rmdir \"$HOME\"/.cache/runara/runs 2>/dev/null; true")
  t.eq(s.commands[1].opts.check, false)
end)

t.test("remove_workdir: refuses anything but this run's working folder, before any command", function()
  local s = scripted_session(function() error("no command may run") end)
  local other_run = HOME .. "/.cache/runara/runs/" .. (runara.run_id == "00000000" and "11111111" or "00000000") .. "-gemm.Ab3dE6gH"
  for _, path in ipairs({ "gemm", HOME .. "/gemm", "~/gemm", HOME .. "/.cache/runara/runs", HOME .. "/.cache/runara/runs/",
                          other_run, made("gemm") .. "/..", HOME .. "/.cache/runara/runs/../../gemm", made("gemm") .. "/x",
                          "/.cache/runara/runs/" .. runara.run_id .. "-x.A/../../../home/you/gemm", made("gemm") .. "'; rm -rf ~; '" }) do
    t.raises(function() machine.remove_workdir(s, path) end,
      "machine.remove_workdir: argument 'path' must be a folder machine.workdir made in this run, got", HERE)
  end
  t.raises(function() machine.remove_workdir(s) end, "argument 'path'", HERE)
  t.eq(#s.commands, 0)
end)

t.done()
