-- runara.machine: what a machine the run reached with ssh is — GPU model, count and memory,
-- driver, ROCm or CUDA version, kernel, OS — for a report's metadata and the run manifest.
--
--   local info = require("runara.machine").describe(s)
--   print(info.gpu, info.gpu_count, info.gpu_vram_gib, info.rocm_version or info.cuda_version)
--
-- GPU facts come from gpu_metrics.read (runara's own fixed tool command lines); the versions from
-- `amd-smi version` / `nvidia-smi`'s header, /etc/os-release and uname, in one remote command.
-- A fact that cannot be read is nil, never a guess.
local M = {}

local function first_line(text)
  local line = (text or ""):match("^%s*([^\n]-)%s*$")
  if line ~= "" then return line end
end

function M.describe(s)
  if (type(s) ~= "table" and type(s) ~= "userdata") or (type(s) == "table" and type(s.exec) ~= "function") then
    error("machine.describe: argument 'session' must be an ssh session (ssh.connect), got " ..
      require("runara.errors").show(s), 2)
  end
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

return M
