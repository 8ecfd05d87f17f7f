-- runara.container: the GPU vendor's `docker run` command line for a workload on a machine the
-- run reached with ssh — which image for which purpose, which device flags, mounts, environment
-- and container name — so a scenario runs AMD's container on an MI300X and NVIDIA's on an H100.
--
--   local container = require("runara.container")
--   local vendor = container.vendor(s)                    -- "amd" or "nvidia", by the machine's tools
--   local cmd = container.command{ vendor = vendor, purpose = "pytorch", name = "runara-gemm-" .. runara.run_id,
--     mounts = { "$HOME/gemm:/workspace" }, command = "python3 /workspace/gemm_bench.py" }
--   s:exec(cmd)
--
-- Everything but vendor() is a pure function of its arguments (no machine, no clock), so each
-- vendor's command line is unit-tested (tests/lua/test_container.lua). See docs/stdlib.md#runaracontainer.
local errors = require("runara.errors")

local M = {}

-- Images per purpose and vendor. A purpose without a vendor's image has no such container: the
-- MLPerf harness is AMD's own submission container (its MLPerf Inference reproduction guide), built for ROCm only.
M.IMAGES = {
  vllm = { amd = "rocm/vllm:latest", nvidia = "vllm/vllm-openai:latest" },
  -- PyTorch for GEMM: AMD's ROCm build, NVIDIA's NGC build (a dated tag: NGC publishes no "latest").
  pytorch = { amd = "rocm/pytorch:latest", nvidia = "nvcr.io/nvidia/pytorch:24.10-py3" },
  mlperf = { amd = "mlperf/llama_inference:latest" },
}

-- How a container reaches the GPUs. AMD: the ROCm kernel driver's /dev/kfd and the render nodes
-- under /dev/dri, with the video group and seccomp unconfined (ROCm's docker instructions);
-- NVIDIA: the NVIDIA container runtime's --gpus. Each fails on the other vendor's machine.
M.DEVICES = {
  amd = { "--device /dev/kfd", "--device /dev/dri", "--group-add video", "--security-opt seccomp=unconfined" },
  nvidia = { "--gpus all" },
}

-- Environment a purpose wants per vendor: hipBLASLt is the faster GEMM path on MI300X (the MI350X training report's library comparison).
M.ENV = {
  pytorch = { amd = { "TORCH_BLAS_PREFER_HIPBLASLT=1" } },
}

local VENDOR_NAMES = { amd = "AMD", nvidia = "NVIDIA" }

local function sorted_keys(t)
  local list = {}
  for k in pairs(t) do list[#list + 1] = k end
  table.sort(list)
  return list
end

-- A word for the machine's shell: as is when it holds nothing the shell would read, else quoted.
local function word(text)
  text = tostring(text)
  if text:match("^[%w%-_./:=@,+]+$") then return text end
  return "'" .. text:gsub("'", "'\\''") .. "'"
end

-- Double quotes keep $HOME (and other variables) for the machine's shell to expand in a mount.
local function dquote(text) return '"' .. tostring(text):gsub('[\\"`]', "\\%0") .. '"' end

-- The vendor whose GPUs a DigitalOcean size has, by its slug: "amd" (gpu-mi300x…), "nvidia"
-- (gpu-h100…, gpu-h200…, gpu-l40s…, gpu-rtx…), nil for a size without GPUs. Lets a scenario that
-- needs one vendor refuse a size before the machine is created and paid for.
function M.size_vendor(size)
  if type(size) ~= "string" or size:sub(1, 4) ~= "gpu-" then return nil end
  return size:match("^gpu%-mi%d") and "amd" or "nvidia"
end

-- What is wrong with a session argument (a message naming `fn`), or nil.
local function session_problem(fn, s)
  if type(s) ~= "userdata" and not (type(s) == "table" and type(s.exec) == "function") then
    return fn .. ": argument 'session' must be an ssh session (ssh.connect)"
  end
end

-- The vendor of the machine behind session `s`, by the GPU tool it has: amd-smi or rocm-smi
-- (AMD), nvidia-smi (NVIDIA). Returns vendor, or nil and a message naming the machine.
local function detect(s)
  local r = s:exec("a=none; n=none; { command -v amd-smi || command -v rocm-smi; } >/dev/null 2>&1 && a=amd; " ..
                   "command -v nvidia-smi >/dev/null 2>&1 && n=nvidia; echo \"$a $n\"", { quiet = true, check = false })
  local amd, nvidia = (r.stdout or ""):match("(%a+) (%a+)")
  local name = tostring(s.name or "the machine")
  if amd == "amd" and nvidia == "nvidia" then
    return nil, name .. " has both AMD (amd-smi/rocm-smi) and NVIDIA (nvidia-smi) GPU tools; pass gpu = \"amd\" or \"nvidia\""
  end
  if amd == "amd" then return "amd" end
  if nvidia == "nvidia" then return "nvidia" end
  return nil, "no GPU tool (amd-smi, rocm-smi or nvidia-smi) on " .. name ..
      ": it has no GPU, or its driver is not installed; pass gpu = \"amd\" or \"nvidia\" to choose anyway"
end

function M.detect(s)
  local bad = session_problem("container.detect", s)
  if bad then error(bad, 2) end
  return detect(s)
end

-- Like detect, but raises the message at the caller's line.
function M.vendor(s)
  local bad = session_problem("container.vendor", s)
  if bad then error(bad, 2) end
  local vendor, message = detect(s)
  if not vendor then error("container.vendor: " .. message, 2) end
  return vendor
end

-- What is wrong with a vendor and purpose (a message), or nil.
local function vendor_problem(vendor, purpose)
  if not M.DEVICES[vendor] then
    return "vendor must be \"amd\" or \"nvidia\", got " .. (type(vendor) == "string" and string.format("%q", vendor) or tostring(vendor))
  end
  if purpose ~= nil and not M.IMAGES[purpose] then
    return string.format("unknown purpose %s (purposes: %s)", tostring(purpose), table.concat(sorted_keys(M.IMAGES), ", "))
  end
  if purpose ~= nil and not M.IMAGES[purpose][vendor] then
    return string.format("there is no %s container for %s: its only image is %s's (%s)", VENDOR_NAMES[vendor], purpose,
      VENDOR_NAMES[next(M.IMAGES[purpose])], M.IMAGES[purpose][next(M.IMAGES[purpose])])
  end
  return nil
end

-- The image for a purpose ("vllm", "pytorch", "mlperf") on a vendor's GPUs.
function M.image(vendor, purpose)
  local problem = vendor_problem(vendor, purpose) or (purpose == nil and "argument 'purpose' is required") or nil
  if problem then error("container.image: " .. problem, 2) end
  return M.IMAGES[purpose][vendor]
end

local SPEC = { vendor = true, purpose = true, image = true, name = true, detach = true, rm = true, ipc = true,
  network = true, devices = true, privileged = true, cap_add = true, group_add = true, mounts = true, env = true,
  entrypoint = true, command = true, shm_size = true }

local function list_of_strings(v)
  if v == nil then return true end
  if type(v) ~= "table" then return false end
  for _, x in ipairs(v) do if type(x) ~= "string" or x == "" then return false end end
  return true
end

-- What is wrong with a command spec (a message), or nil.
local function spec_problem(spec)
  if type(spec) ~= "table" then return "argument must be a table, got " .. type(spec) end
  local unknown = errors.unknown_option(spec, SPEC)
  if unknown then return unknown end
  -- An image of the caller's own needs no image of ours for the purpose, only a known purpose.
  local problem = vendor_problem(spec.vendor, spec.image == nil and spec.purpose or nil)
  if problem then return problem end
  if spec.purpose ~= nil and not M.IMAGES[spec.purpose] then return vendor_problem(spec.vendor, spec.purpose) end
  if spec.image == nil and spec.purpose == nil then return "give option 'purpose' (e.g. \"vllm\") or 'image'" end
  for _, k in ipairs({ "image", "entrypoint", "command", "ipc", "network", "shm_size" }) do
    if spec[k] ~= nil and (type(spec[k]) ~= "string" or spec[k] == "") then
      return string.format("option '%s' must be a non-empty string", k)
    end
  end
  if spec.name ~= nil and (type(spec.name) ~= "string" or not spec.name:match("^[%w][%w_.%-]*$")) then
    return "option 'name' must be a container name (letters, digits, '_', '.', '-'), got " .. tostring(spec.name)
  end
  for _, k in ipairs({ "devices", "cap_add", "group_add", "mounts", "env" }) do
    if not list_of_strings(spec[k]) then return string.format("option '%s' must be a list of strings", k) end
  end
  for _, m in ipairs(spec.mounts or {}) do
    if not m:find(":", 1, true) then return "option 'mounts': " .. string.format("%q", m) .. " is not HOST:CONTAINER" end
  end
  for _, e in ipairs(spec.env or {}) do
    if not e:match("^[%a_][%w_]*=") and not e:match("^[%a_][%w_]*$") then
      return "option 'env': " .. string.format("%q", e) .. " is neither NAME nor NAME=VALUE"
    end
  end
  return nil
end

-- The `docker run` command line (one string for the machine's shell) for spec:
--   vendor      "amd" or "nvidia" (required): device flags and default image
--   purpose     "vllm", "pytorch" or "mlperf": the vendor's image for it and its environment
--   image       an image of your own instead (the vendor's device flags still apply)
--   name        container name (use the run id: a run must never remove a container it did not start)
--   detach, rm  -d; --rm (default true)
--   ipc, network  e.g. "host"
--   devices, group_add, cap_add, privileged  more device access (e.g. MLPerf's /dev/mem)
--   mounts      { "HOST:CONTAINER", … } ($HOME in HOST is expanded by the machine's shell)
--   env         { "NAME", "NAME=VALUE", … } (a bare NAME passes the ssh command's own value
--               through, so a secret never appears on the command line)
--   entrypoint  overrides the image's ENTRYPOINT
--   command     what follows the image, as is (already quoted for the shell)
function M.command(spec)
  local problem = spec_problem(spec)
  if problem then error("container.command: " .. problem, 2) end
  local a = { "docker run" }
  local function add(x) a[#a + 1] = x end
  if spec.rm ~= false then add("--rm") end
  if spec.detach then add("-d") end
  if spec.name then add("--name " .. spec.name) end
  if spec.ipc then add("--ipc=" .. word(spec.ipc)) end
  if spec.network then add("--network=" .. word(spec.network)) end
  if spec.shm_size then add("--shm-size=" .. word(spec.shm_size)) end
  for _, flag in ipairs(M.DEVICES[spec.vendor]) do add(flag) end
  for _, d in ipairs(spec.devices or {}) do add("--device " .. word(d)) end
  for _, g in ipairs(spec.group_add or {}) do add("--group-add " .. word(g)) end
  for _, c in ipairs(spec.cap_add or {}) do add("--cap-add " .. word(c)) end
  if spec.privileged then add("--privileged") end
  local env = {}
  for _, e in ipairs((spec.purpose and M.ENV[spec.purpose] or {})[spec.vendor] or {}) do env[#env + 1] = e end
  for _, e in ipairs(spec.env or {}) do env[#env + 1] = e end
  for _, e in ipairs(env) do add("-e " .. (e:find("=", 1, true) and word(e) or e)) end
  for _, m in ipairs(spec.mounts or {}) do add("-v " .. dquote(m)) end
  if spec.entrypoint then add("--entrypoint " .. word(spec.entrypoint)) end
  add(word(spec.image or M.IMAGES[spec.purpose][spec.vendor]))
  if spec.command then add(spec.command) end
  return table.concat(a, " ")
end

return M
