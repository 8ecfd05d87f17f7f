-- runara.vllm: a vLLM OpenAI-compatible server on a machine the run reached with ssh.
--
--   local vllm = require("runara.vllm")
--   local server = vllm.start(s, { model = "meta-llama/Llama-3.3-70B-Instruct", quantization = "fp8",
--                                  hf_token = runara.secret("HF_TOKEN") })
--   http_load.run{ url = server.url, model = server.model, ... }
--   server:stop()
--
-- The server runs in the foreground of an ssh process (docker or pip), so the run's teardown
-- kills it with the session; readiness is `GET /v1/models` through an ssh tunnel, polled, never
-- a fixed sleep; nothing needs a public port. See docs/stdlib.md#runaravllm.
local M = {}

local container = require("runara.container")
local IMAGES = container.IMAGES.vllm  -- amd: rocm/vllm:latest, nvidia: vllm/vllm-openai:latest
-- The run's own container name: `docker rm -f` at stop never removes a container another run (or
-- the machine's owner) started under the same name.
local CONTAINER = "runara-vllm-" .. runara.run_id
local KNOWN = { model = true, mode = true, image = true, gpu = true, port = true, quantization = true,
  dtype = true, max_model_len = true, gpu_memory_utilization = true, tensor_parallel_size = true,
  extra_args = true, hf_token = true, ready_timeout = true, poll = true, log = true, quiet = true, install = true,
  devices = true, container = true, pipeline_parallel_size = true, distributed_executor_backend = true,
  ray_container = true, host_ip = true }

M.KNOWN = KNOWN  -- vllm.start's option names, for wrappers that pass them on (runara.replicas)

-- The variable that limits a vendor's runtime to some GPUs (vLLM's docs): CUDA's on NVIDIA; on AMD
-- HIP's, which vLLM's ROCm platform copies into CUDA_VISIBLE_DEVICES itself (vllm/platforms/rocm.py).
M.VISIBLE_DEVICES = { amd = "HIP_VISIBLE_DEVICES", nvidia = "CUDA_VISIBLE_DEVICES" }

local errors = require("runara.errors")
local show = errors.show

local function quote(text) return "'" .. tostring(text):gsub("'", "'\\''") .. "'" end

-- What is wrong with vllm.start's options (a message), or nil. Every check here runs before
-- anything happens on the machine.
local function problem(opts)
  if type(opts) ~= "table" then return "options must be a table, got " .. type(opts) end
  local unknown = errors.unknown_option(opts, KNOWN)
  if unknown then return unknown end
  if type(opts.model) ~= "string" or opts.model == "" then
    return "option 'model' is required (e.g. model = \"meta-llama/Llama-3.3-70B-Instruct\")"
  end
  if opts.mode ~= nil and opts.mode ~= "docker" and opts.mode ~= "pip" then
    return "option 'mode' must be \"docker\" or \"pip\", got " .. show(opts.mode)
  end
  if opts.gpu ~= nil and not IMAGES[opts.gpu] then return "option 'gpu' must be \"amd\" or \"nvidia\", got " .. show(opts.gpu) end
  local port = opts.port or 8000
  if not errors.whole(port) or port > 65535 then
    return "option 'port' must be a whole number from 1 to 65535, got " .. show(port)
  end
  for _, k in ipairs({ "image", "quantization", "dtype", "log" }) do
    if opts[k] ~= nil and (type(opts[k]) ~= "string" or opts[k] == "") then
      return string.format("option '%s' must be a non-empty string, got %s", k, show(opts[k]))
    end
  end
  for _, k in ipairs({ "max_model_len", "tensor_parallel_size", "pipeline_parallel_size" }) do
    if opts[k] ~= nil and not errors.whole(opts[k]) then
      return string.format("option '%s' must be a whole number >= 1, got %s", k, show(opts[k]))
    end
  end
  local u = opts.gpu_memory_utilization
  if u ~= nil and not (type(u) == "number" and u > 0 and u <= 1) then
    return "option 'gpu_memory_utilization' must be a number above 0 and at most 1, got " .. show(u)
  end
  for _, k in ipairs({ "ready_timeout", "poll" }) do
    if opts[k] ~= nil and not (type(opts[k]) == "number" and opts[k] > 0) then
      return string.format("option '%s' must be a number of seconds above 0, got %s", k, show(opts[k]))
    end
  end
  for _, k in ipairs({ "quiet", "install" }) do
    if opts[k] ~= nil and type(opts[k]) ~= "boolean" then
      return string.format("option '%s' must be true or false, got %s", k, show(opts[k]))
    end
  end
  if opts.devices ~= nil then
    local d, seen = opts.devices, {}
    if type(d) ~= "table" or #d == 0 then
      return "option 'devices' must be a non-empty list of GPU indices (e.g. { 0, 1 }), got " .. show(d)
    end
    for i, x in ipairs(d) do
      if not (type(x) == "number" and x >= 0 and x % 1 == 0) then
        return string.format("option 'devices' must be a list of GPU indices (whole numbers from 0); item %d is %s", i, show(x))
      end
      if seen[x] then return string.format("option 'devices' names GPU %d twice", x) end
      seen[x] = true
    end
  end
  local backend = opts.distributed_executor_backend
  if backend ~= nil and backend ~= "mp" and backend ~= "ray" then
    return "option 'distributed_executor_backend' must be \"mp\" (one machine) or \"ray\" (a Ray cluster), got " .. show(backend)
  end
  if opts.ray_container ~= nil then
    if type(opts.ray_container) ~= "string" or not opts.ray_container:match("^[%w][%w_.%-]*$") then
      return "option 'ray_container' must be the name of the Ray head's container (runara.cluster's), got " .. show(opts.ray_container)
    end
    if opts.host_ip ~= nil and (type(opts.host_ip) ~= "string" or not opts.host_ip:match("^[%x%.:]+$")) then
      return "option 'host_ip' must be an IP address (the Ray node's VLLM_HOST_IP), got " .. show(opts.host_ip)
    end
    if backend ~= "ray" then return "option 'ray_container' runs vLLM in a Ray node's container: it needs distributed_executor_backend = \"ray\"" end
    for _, k in ipairs({ "mode", "image", "devices", "container" }) do
      if opts[k] ~= nil and not (k == "mode" and opts[k] == "docker") then
        return string.format("option '%s' does not apply with ray_container (vLLM runs in the Ray head's container)", k)
      end
    end
  end
  if opts.host_ip ~= nil and opts.ray_container == nil then
    return "option 'host_ip' is the driver's VLLM_HOST_IP in a Ray node's container: it needs ray_container"
  end
  if opts.container ~= nil and (type(opts.container) ~= "string" or not opts.container:match("^[%w][%w_.%-]*$")) then
    return "option 'container' must be a container name (letters, digits, '_', '.', '-'), got " .. show(opts.container)
  end
  if opts.extra_args ~= nil then
    if type(opts.extra_args) ~= "table" then return "option 'extra_args' must be a list of strings, got " .. show(opts.extra_args) end
    for i, a in ipairs(opts.extra_args) do
      if type(a) ~= "string" and type(a) ~= "number" then return string.format("option 'extra_args' must be a list of strings; item %d is %s", i, show(a)) end
    end
  end
end

-- What is wrong with vllm.start's session argument (a message), or nil.
local function session_problem(s)
  if type(s) == "userdata" or (type(s) == "table" and type(s.exec) == "function") then return nil end
  return "argument 'session' must be an ssh session (ssh.connect), got " .. show(s)
end

-- For a wrapper of vllm.start (e.g. runara.scenario's serve): the message vllm.start would raise
-- about these options ("vllm.start: ..."), or nil; the wrapper raises it at its own caller's line.
function M.check_options(opts)
  local msg = problem(opts)
  return msg and "vllm.start: " .. msg or nil
end

local function serve_args(opts, port)
  -- Loopback only: the run reaches the server through s:forward, so no port opens on a public address.
  local a = { "vllm", "serve", quote(opts.model), "--host", "127.0.0.1", "--port", tostring(port) }
  local function add(flag, value)
    if value ~= nil then a[#a + 1] = flag; a[#a + 1] = quote(value) end
  end
  add("--quantization", opts.quantization)
  add("--dtype", opts.dtype)
  add("--max-model-len", opts.max_model_len)
  add("--gpu-memory-utilization", opts.gpu_memory_utilization)
  add("--tensor-parallel-size", opts.tensor_parallel_size)
  add("--pipeline-parallel-size", opts.pipeline_parallel_size)
  add("--distributed-executor-backend", opts.distributed_executor_backend)
  for _, extra in ipairs(opts.extra_args or {}) do a[#a + 1] = quote(extra) end
  return table.concat(a, " ")
end

-- The vendor's container (runara.container): AMD's devices and ROCm image, or NVIDIA's --gpus and
-- CUDA image. The entrypoint is named because the images disagree on theirs (vllm/vllm-openai's
-- is the OpenAI API server, which would read `vllm serve …` as unknown arguments).
-- `visible` is the GPU-visibility assignment ("CUDA_VISIBLE_DEVICES=0,1") or nil.
local function docker_command(opts, gpu, serve, visible)
  local env = {}
  if visible then env[#env + 1] = visible end
  if opts.hf_token then env[#env + 1] = "HF_TOKEN" end
  return container.command{ vendor = gpu, purpose = "vllm", image = opts.image, name = opts.container or CONTAINER,
    ipc = "host", network = "host", env = #env > 0 and env or nil,
    mounts = { "$HOME/.cache/huggingface:/root/.cache/huggingface" },
    entrypoint = "vllm", command = (serve:gsub("^vllm ", "")) }
end

-- vLLM in the Ray head's running container (vLLM's multi-node docs: `docker exec` into the head
-- node's container, then `vllm serve … --distributed-executor-backend ray`), so its driver is on
-- the Ray cluster that container joined; its environment (VLLM_HOST_IP, the interfaces) is the
-- container's; VLLM_HOST_IP (host_ip) is repeated on the exec line so that the driver's address,
-- which must be a Ray node's, is explicit. HF_TOKEN passes by name from the ssh command's environment.
local function exec_command(opts, serve)
  return "docker exec" .. (opts.host_ip and (" -e VLLM_HOST_IP=" .. opts.host_ip) or "") ..
    (opts.hf_token and " -e HF_TOKEN" or "") .. " " .. opts.ray_container .. " " .. serve
end

local Server = {}
Server.__index = Server

-- The last `n` lines of what the server printed.
function Server:log_tail(n)
  local out = self.process:output().stdout or ""
  local lines = {}
  for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
  return table.concat(lines, "\n", math.max(1, #lines - (n or 20) + 1))
end

-- Copies the server's whole log (kept on the machine) into the output folder.
function Server:download_log(local_path)
  return self.session:download(self.log, local_path or "logs/vllm.log")
end

function Server:stop()
  if self.stopped then return end
  self.stopped = true
  self.process:kill("TERM")
  self.process:wait()
  -- In a Ray node's container, vLLM ends with that container (runara.cluster's c:stop removes it).
  if self.mode == "docker" and not self.ray_container then self.session:exec("docker rm -f " .. self.container .. " >/dev/null 2>&1; true", { quiet = true }) end
end

-- Seconds until the server answered; or nil and why it never did (the message vllm.start raises).
local function wait_ready(server, timeout, poll)
  local started = runara.now()
  local last_note = started
  while true do
    local ok, r = pcall(metrics.get, server.url .. "/v1/models", { timeout = 5 })
    if ok and r.status == 200 then return runara.now() - started end
    if not server.process:running() then
      return nil, string.format("vllm.start: the server on %s exited before it was ready; its last lines:\n%s",
        server.session.name, server:log_tail(20))
    end
    local waited = runara.now() - started
    if waited > timeout then
      server.process:kill("TERM")
      return nil, string.format("vllm.start: the server on %s was not ready after %d s (GET /v1/models: %s); its last lines:\n%s",
        server.session.name, math.floor(waited), ok and ("HTTP " .. r.status) or tostring(r):match("[^\n]*"),
        server:log_tail(20))
    end
    if runara.now() - last_note >= 15 then
      last_note = runara.now()
      local tail = server:log_tail(1)
      runara.log(string.format("vllm: waiting for %s on %s (%d s; last line: %s)", server.model,
        server.session.name, math.floor(waited), tail ~= "" and tail or "nothing yet"))
    end
    runara.sleep(poll)
  end
end

-- vllm.start's work: the server, or nil and the message vllm.start raises (a bad argument or
-- option, a machine without a GPU tool, a server that never answered). Errors of the machine's
-- own (ssh) are raised as they come.
local function launch(s, opts)
  local bad = session_problem(s) or problem(opts)
  if bad then return nil, "vllm.start: " .. bad end
  local gpu = opts.gpu
  if not gpu then
    local message
    gpu, message = container.detect(s)  -- by the GPU tool the machine carries
    if not gpu then return nil, "vllm.start: " .. message end
  end
  local mode = opts.mode or "docker"
  local port = opts.port or 8000
  local log = opts.log or "vllm.log"
  local serve = serve_args(opts, port)
  -- Only these GPUs for this server (several servers on one machine, each on GPUs of its own).
  local visible = opts.devices and (M.VISIBLE_DEVICES[gpu] .. "=" .. table.concat(opts.devices, ",")) or nil
  -- pip mode installs vLLM first where the machine lacks it (the image's Python, no venv).
  local install = opts.install ~= false and "command -v vllm >/dev/null || python3 -m pip install --quiet vllm || exit 1; " or ""
  -- The server's own command line (for the run manifest): the docker run, or vllm serve.
  local server_command = opts.ray_container and exec_command(opts, serve) or
    mode == "docker" and docker_command(opts, gpu, serve, visible) or ((visible and visible .. " " or "") .. serve)
  local command = (mode == "docker" and server_command or install .. server_command) .. " 2>&1 | tee " .. quote(log)
  runara.log(string.format("vllm: starting %s on %s (%s)", opts.model, s.name, opts.ray_container and
    string.format("in the Ray head's container %s, tensor parallel %s x pipeline parallel %s", opts.ray_container,
      tostring(opts.tensor_parallel_size or 1), tostring(opts.pipeline_parallel_size or 1)) or
    (mode .. ", " .. (mode == "docker" and (opts.image or IMAGES[gpu]) or "pip"))))
  local process = s:spawn("set -o pipefail 2>/dev/null; " .. command,
    { env = opts.hf_token and { HF_TOKEN = opts.hf_token } or nil, quiet = opts.quiet ~= false })
  local server = setmetatable({ session = s, process = process, model = opts.model, mode = mode, gpu = gpu,
    port = port, log = log, url = s:forward(port), command = server_command, devices = opts.devices,
    container = opts.ray_container or opts.container or CONTAINER, ray_container = opts.ray_container,
    tensor_parallel_size = opts.tensor_parallel_size, pipeline_parallel_size = opts.pipeline_parallel_size,
    image = mode == "docker" and not opts.ray_container and (opts.image or IMAGES[gpu]) or nil }, Server)
  local ready_s, not_ready = wait_ready(server, opts.ready_timeout or 1800, opts.poll or (runara.simulated and 0.5 or 2))
  if not ready_s then return nil, not_ready end
  server.ready_s = ready_s
  server.version = server:log_tail(400):match("[Vv][Ll][Ll][Mm] API server version ([%w%.%+%-]+)") or "unknown"
  runara.log(string.format("vllm: %s ready on %s after %.1f s (vLLM %s)", opts.model, s.name, server.ready_s, server.version))
  return server
end

-- Starts the server and waits until it answers. Returns a server: url, model, version, ready_s.
-- Its errors carry the line that called it.
function M.start(s, opts)
  local server, message = launch(s, opts)
  if not server then error(message, 2) end
  return server
end

-- For a wrapper of vllm.start (e.g. runara.scenario's serve): the server, or nil and the message
-- vllm.start would raise; the wrapper raises it at its own caller's line.
function M.try_start(s, opts)
  return launch(s, opts)
end

return M
