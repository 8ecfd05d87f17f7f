-- runara.machine: what a machine the run reached with ssh is — GPU model, count and memory,
-- driver, ROCm or CUDA version, kernel, OS — for a report's metadata and the run manifest.
--
--   local info = require("runara.machine").describe(s)
--   print(info.gpu, info.gpu_count, info.gpu_vram_gib, info.rocm_version or info.cuda_version)
--
-- GPU facts come from gpu_metrics.read (runara's own fixed tool command lines); the versions from
-- `amd-smi version` / `nvidia-smi`'s header, /etc/os-release and uname, in one remote command.
-- A fact that cannot be read is nil, never a guess.
--
--   local dir = require("runara.machine").workdir(s, "gemm")   -- a new folder of this run's only
--   s:upload("gemm/gemm_bench.py", dir .. "/gemm_bench.py")
--   require("runara.machine").remove_workdir(s, dir)
--
-- A scenario gets its working folder with sc:workdir (runara.scenario), which removes it at the end.
local M = {}

-- Where a run's working folders live on a machine: runara's own corner of the remote home, never
-- a name a user may already use (a `~/gemm` of theirs is not ours to fill or to delete).
local RUNS_DIR = ".cache/runara/runs"

local function quote(text) return "'" .. tostring(text):gsub("'", "'\\''") .. "'" end

-- Whether `path` is one of this run's working folders as machine.workdir makes them (optionally
-- for `name`): absolute, straight under RUNS_DIR, named <run id>-<name>.<mktemp's letters>, and
-- free of what a command line or a container mount (`-v HOST:CONTAINER`, inside double quotes)
-- would read as syntax.
local UNSAFE = "[%c'\"\\$`:]"
local function ours(path, name)
  if type(path) ~= "string" or path:find("/%.%.?/") or path:find(UNSAFE) then return false end
  local leaf = path:match("^/") and path:match("/%.cache/runara/runs/([^/]+)$")
  local got = leaf and leaf:match("^" .. runara.run_id .. "%-([%w_.-]+)%.%w+$")
  return got ~= nil and (name == nil or got == name)
end

local function check_session(s, who)
  if (type(s) ~= "table" and type(s) ~= "userdata") or (type(s) == "table" and type(s.exec) ~= "function") then
    error(who .. ": argument 'session' must be an ssh session (ssh.connect), got " .. require("runara.errors").show(s), 3)
  end
end

local function first_line(text)
  local line = (text or ""):match("^%s*([^\n]-)%s*$")
  if line ~= "" then return line end
end

function M.describe(s)
  check_session(s, "machine.describe")
  local info = {}
  local ok, snap = pcall(gpu_metrics.read, s)
  if ok then
    local st = snap.static or {}
    info.gpu_backend = snap.backend
    info.gpu = st.model
    info.gpu_count = st.gpu_count or #snap.gpus
    -- Memory in GiB (2^30 bytes), as the reports show it; _gb keys are 10^9 bytes (docs/report.md#units).
    info.gpu_vram_gib = st.vram_total_bytes and math.floor(st.vram_total_bytes / 2^30 * 10 + 0.5) / 10 or nil
    info.gpu_vram_gb = st.vram_total_bytes and math.floor(st.vram_total_bytes / 1e9 * 10 + 0.5) / 10 or nil
    info.driver_version = st.driver_version
  else
    info.gpu_error = tostring(snap)
  end
  local v = s:exec("(amd-smi version 2>/dev/null || true); (nvidia-smi 2>/dev/null | head -5 || true); " ..
                   "(. /etc/os-release 2>/dev/null && echo \"OS: $PRETTY_NAME\") || true; " ..
                   "echo \"KERNEL: $(uname -r 2>/dev/null)\"; echo \"ARCH: $(uname -m 2>/dev/null)\"", { quiet = true, check = false })
  local out = v.stdout or ""
  info.rocm_version = out:match("ROCm version:%s*([%d%.]+)")
  info.cuda_version = out:match("CUDA Version:%s*([%d%.]+)")
  info.amdsmi_version = out:match("AMDSMI Tool:%s*([%w%.%+%-]+)")
  info.os = first_line(out:match("OS: ([^\n]+)"))
  info.kernel = first_line(out:match("KERNEL: ([^\n]*)"))
  info.arch = first_line(out:match("ARCH: ([^\n]*)"))
  return info
end

-- A working folder for this run on the machine: made by `mktemp -d` under ~/.cache/runara/runs/,
-- so it did not exist before (whatever the machine's home holds) and no other user or run shares
-- it; mode 0700, and runara's folders above it are made 0700 where they are new. `name` (letters,
-- digits, - _ .) only makes the path readable: RUNS_DIR/<run id>-<name>.XXXXXXXX. Returns the
-- absolute path, for commands, uploads and container mounts alike; or nil and why not (for
-- callers that raise it at their own caller's line, as runara.scenario's sc:workdir does).
function M.try_workdir(s, name)
  if (type(s) ~= "table" and type(s) ~= "userdata") or (type(s) == "table" and type(s.exec) ~= "function") then
    return nil, "argument 'session' must be an ssh session (ssh.connect), got " .. require("runara.errors").show(s)
  end
  if type(name) ~= "string" or not name:match("^[%w_.-]+$") or #name > 64 then
    return nil, "argument 'name' must be up to 64 letters, digits, '-', '_' or '.', got " .. require("runara.errors").show(name)
  end
  local template = string.format("\"$HOME\"/%s/%s-%s.XXXXXXXX", RUNS_DIR, runara.run_id, name)
  local r = s:exec("umask 077 && mkdir -p \"$HOME\"/" .. RUNS_DIR .. " && mktemp -d " .. template,
    { quiet = true, check = false })
  local path = (r.stdout or ""):match("^(/[^\n]*)\n?$")
  if r.code ~= 0 or not ours(path, name) then
    local why = ((r.stderr or "") ~= "" and r.stderr or (r.stdout or "")):match("^%s*(.-)%s*$")
    if r.code == 0 and path and path:find(UNSAFE) then
      why = "its path " .. path .. " has a character (quote, backslash, $, `, :) runara cannot pass on"
    elseif r.code == 0 then
      why = "mktemp printed " .. require("runara.errors").show((r.stdout or ""):sub(1, 200)) .. ", not a folder " ..
        RUNS_DIR .. "/" .. runara.run_id .. "-" .. name .. ".XXXXXXXX"
    end
    return nil, string.format("could not make a working folder under ~/%s on %s (exit %s): %s",
      RUNS_DIR, tostring(s.name), tostring(r.code), why ~= "" and why or "no output")
  end
  return path
end

function M.workdir(s, name)
  local path, why = M.try_workdir(s, name)
  if not path then error("machine.workdir: " .. why, 2) end
  return path
end

-- Removes a folder machine.workdir made, by its exact path (nothing else: a path that is not one
-- of this run's working folders is refused), then RUNS_DIR itself when no other run's folder is in it.
function M.remove_workdir(s, path)
  check_session(s, "machine.remove_workdir")
  if not ours(path) then
    error("machine.remove_workdir: argument 'path' must be a folder machine.workdir made in this run, got " ..
      require("runara.errors").show(path), 2)
  end
  return s:exec("rm -rf -- " .. quote(path) .. "; rmdir \"$HOME\"/" .. RUNS_DIR .. " 2>/dev/null; true",
    { quiet = true, check = false })
end

return M
