-- runara.cluster_plan: the pure half of runara.cluster — what cluster.create's options mean, the
-- ports the run's firewall opens, the Ray head's and workers' container command lines, torchrun's
-- multi-node command, and the readings of what the machines print (`ray status`, `ip -o -4 addr`,
-- SSH_CONNECTION). No machine, no clock: each is unit-tested (tests/lua/test_cluster.lua).
local errors = require("runara.errors")
local container = require("runara.container")
local show = errors.show

local M = {}

-- Ray's ports, pinned so that the firewall can name them (Ray's "Configuring Ports" page: by
-- default the node manager, object manager and workers take random ports). The head's GCS on
-- 6379; each node's own services on 6380-6385; its workers on 10002-10999.
M.RAY = {
  gcs = 6379,
  node_manager = 6380, object_manager = 6381, runtime_env_agent = 6382,
  dashboard_agent_grpc = 6383, dashboard_agent_listen = 6384, metrics_export = 6385,
  min_worker = 10002, max_worker = 10999,
}
M.TORCHRUN_PORT = 29500  -- torchrun's default rendezvous (c10d store) port
M.VLLM_PORT = 8000
-- NCCL and Gloo open their data connections on the kernel's ephemeral ports (Linux's
-- ip_local_port_range, 32768-60999 on Ubuntu): between the run's machines these must be open.
M.DATA_PORTS = "32768-60999"

M.defaults = { join_timeout = 600 }  -- seconds c:start_ray waits for every node

local function whole(v, low) return type(v) == "number" and v % 1 == 0 and v >= (low or 1) end

-- The GPU count a DigitalOcean size slug names (gpu-mi300x8-1536gb → 8, gpu-h100x1-80gb → 1), or nil.
function M.size_gpus(size)
  return tonumber(tostring(size):match("^gpu%-[%a%d]-x(%d+)%-"))
end

-- A port (1-65535) or a range "A-B" as droplet.firewall takes them; nil and why not.
local function port_item(p)
  if whole(p) and p <= 65535 then return p end
  if type(p) == "string" then
    local n = tonumber(p:match("^(%d+)$"))
    if n and n >= 1 and n <= 65535 then return p end
    local a, b = p:match("^(%d+)%-(%d+)$")
    a, b = tonumber(a), tonumber(b)
    if a and b and a >= 1 and b <= 65535 and a <= b then return p end
  end
  return nil
end

local CREATE = { nodes = true, size = true, image = true, region = true, ports = true, vpc = true, name = true,
  ip_range = true, interface = true, timeout = true }

-- What is wrong with cluster.create's options (a message, without the prefix), or nil.
function M.create_problem(opts)
  if type(opts) ~= "table" then return "options must be a table, got " .. type(opts) end
  local unknown = errors.unknown_option(opts, CREATE)
  if unknown then return unknown end
  if not whole(opts.nodes) then return "option 'nodes' must be a whole number of machines >= 1, got " .. show(opts.nodes) end
  for _, k in ipairs({ "size", "image", "region" }) do
    if type(opts[k]) ~= "string" or opts[k] == "" then
      return string.format("option '%s' is required (a DigitalOcean %s slug), got %s", k, k, show(opts[k]))
    end
  end
  local gpus = M.size_gpus(opts.size)
  if opts.nodes > 1 and gpus ~= 8 then
    return string.format("%d nodes of size %s: multi-node GPU droplets come only in multiples of 8 GPUs, and %s has %s; " ..
      "choose an 8-GPU size (e.g. gpu-mi300x8-1536gb or gpu-h100x8-640gb), or nodes = 1", opts.nodes, opts.size, opts.size,
      gpus and (gpus .. " GPU" .. (gpus == 1 and "" or "s")) or "no GPUs")
  end
  if opts.ports ~= nil then
    if type(opts.ports) ~= "table" then return "option 'ports' must be a list of ports (8000) or ranges (\"9000-9010\"), got " .. show(opts.ports) end
    for i, p in ipairs(opts.ports) do
      if not port_item(p) then
        return string.format("option 'ports': item %d is %s, not a port from 1 to 65535 or a range \"A-B\"", i, show(p))
      end
    end
  end
  if opts.vpc ~= nil and (type(opts.vpc) ~= "string" or opts.vpc == "") then
    return "option 'vpc' must be the name of an existing VPC of the account (or nil: a VPC of the run's own), got " .. show(opts.vpc)
  end
  if opts.ip_range ~= nil and (type(opts.ip_range) ~= "string" or not opts.ip_range:match("^%d+%.%d+%.%d+%.%d+/%d+$")) then
    return "option 'ip_range' must be a CIDR block such as \"10.200.0.0/24\", got " .. show(opts.ip_range)
  end
  if opts.ip_range ~= nil and opts.vpc ~= nil then
    return "option 'ip_range' is the range of a VPC of the run's own; an existing VPC ('vpc') keeps its own"
  end
  if opts.name ~= nil and (type(opts.name) ~= "string" or not opts.name:match("^[%a%d][%a%d%.%-]*$")) then
    return "option 'name' must be a name prefix (letters, digits, '.', '-'), got " .. show(opts.name)
  end
  if opts.interface ~= nil and (type(opts.interface) ~= "string" or not opts.interface:match("^[%w%.%-_]+$")) then
    return "option 'interface' must be a network interface name (e.g. \"eth1\"), got " .. show(opts.interface)
  end
  if opts.timeout ~= nil and not (type(opts.timeout) == "number" and opts.timeout > 0) then
    return "option 'timeout' must be a number of seconds above 0, got " .. show(opts.timeout)
  end
end

-- The ports the run's firewall opens between its machines (and to the controller): Ray's, the
-- vLLM server's, torchrun's rendezvous, NCCL/Gloo's data ports, then the script's own. Each once.
function M.firewall_ports(extra)
  local R = M.RAY
  local list = { R.gcs, string.format("%d-%d", R.node_manager, R.metrics_export),
    string.format("%d-%d", R.min_worker, R.max_worker), M.VLLM_PORT, M.TORCHRUN_PORT, M.DATA_PORTS }
  local seen = {}
  for _, p in ipairs(list) do seen[tostring(p)] = true end
  for _, p in ipairs(extra or {}) do
    if not seen[tostring(p)] then list[#list + 1] = p; seen[tostring(p)] = true end
  end
  return list
end

-- Whether `port` falls inside one of `ports` (numbers or "A-B" strings).
function M.port_open(ports, port)
  for _, p in ipairs(ports or {}) do
    local a, b = tostring(p):match("^(%d+)%-(%d+)$")
    a, b = tonumber(a or p), tonumber(b or p)
    if a and port >= a and port <= b then return true end
  end
  return false
end

-- The controller's address (what the machine sees runara connect from) out of SSH_CONNECTION
-- ("CLIENT_IP CLIENT_PORT SERVER_IP SERVER_PORT", OpenSSH's sshd); nil when it is not that.
function M.controller_address(text)
  local ip = tostring(text or ""):match("^%s*(%S+)%s+%d+%s+%S+%s+%d+%s*$")
  if not ip then return nil end
  if ip:match("^%d+%.%d+%.%d+%.%d+$") or ip:match("^[%x:]+$") then return ip end
  return nil
end

-- The interface that carries `ip`, out of `ip -o -4 addr show` (iproute2's one-line form:
-- "3: eth1    inet 10.116.0.2/20 brd 10.116.15.255 scope global eth1\ ..."); nil when none does.
function M.interface_for(text, ip)
  for line in tostring(text or ""):gmatch("[^\n]+") do
    local name, addr = line:match("^%d+:%s+([^%s:@]+)[^%s]*%s+inet%s+([%d%.]+)/")
    if name and addr == ip then return name end
  end
  return nil
end

-- `ray status` read: { nodes = active + idle node lines, pending = pending node lines,
-- failures = { "…" }, gpus = total GPUs, gpus_used = GPUs in use }. Both of Ray's layouts: the
-- autoscaler v1 ("Healthy:" … "Usage:") and v2 ("Active:", "Idle:" … "Total Usage:"). The
-- cluster-wide usage is the first resource block; the per-node ("Node: …") blocks after it are
-- not counted twice.
function M.parse_ray_status(text)
  local r = { nodes = 0, pending = 0, failures = {}, gpus = nil, gpus_used = nil }
  local section, in_usage = nil, false
  for line in tostring(text or ""):gmatch("[^\n]+") do
    local head = line:match("^(%a[%a ]-):%s*$")
    if head then
      section = head
      in_usage = (head == "Usage" or head == "Total Usage") and r.gpus == nil
    elseif line:match("^Node:") then
      section, in_usage = "node", false
    elseif line:match("^%-%-%-") or line:match("^=") then
      -- rules and the banner
    else
      local item = line:match("^%s+(.-)%s*$")
      if item and item ~= "" and not item:match("^%(no ") then
        if section == "Active" or section == "Healthy" or section == "Idle" then
          r.nodes = r.nodes + (tonumber(item:match("^(%d+)%s")) or 1)
        elseif section == "Pending" then
          r.pending = r.pending + 1
        elseif section == "Recent failures" then
          r.failures[#r.failures + 1] = item
        elseif in_usage then
          local used, total = item:match("^([%d%.]+)/([%d%.]+)%s+GPU$")
          if used then r.gpus_used, r.gpus = tonumber(used), tonumber(total) end
        end
      end
    end
  end
  return r
end

-- Whether a parsed `ray status` shows `nodes` nodes and at least `gpus` GPUs; and, when not,
-- what it shows, in words for the error.
function M.ray_ready(status, nodes, gpus)
  local have_gpus = status.gpus or 0
  if status.nodes >= nodes and have_gpus >= gpus then return true end
  return false, string.format("%d of %d node(s) and %s of %d GPU(s) joined%s%s", status.nodes, nodes,
    status.gpus and string.format("%g", status.gpus) or "no", gpus,
    status.pending > 0 and string.format(", %d pending", status.pending) or "",
    #status.failures > 0 and ("; recent failures: " .. table.concat(status.failures, "; ")) or "")
end

-- The container a node's Ray runs in: the run's own name, one per node (a run never removes a
-- container it did not start).
function M.container_name(run_id, rank)
  return string.format("runara-ray-%s-%d", run_id, rank)
end

-- The environment every node's container gets: vLLM's and the collectives' choice of address
-- and interface (vLLM's multi-node docs: VLLM_HOST_IP per node; NCCL_SOCKET_IFNAME and
-- GLOO_SOCKET_IFNAME so that NCCL/RCCL and Gloo use the private network, not the public one).
function M.node_env(node)
  return { "VLLM_HOST_IP=" .. node.private_ip, "NCCL_SOCKET_IFNAME=" .. node.interface,
    "GLOO_SOCKET_IFNAME=" .. node.interface, "HF_TOKEN" }
end

-- `ray start`'s arguments for a node (rank 1 is the head), every port pinned.
function M.ray_start_args(spec)
  local R = M.RAY
  local a = { "start", "--block" }
  if spec.rank == 1 then
    a[#a + 1] = "--head"
    a[#a + 1] = "--port=" .. R.gcs
    a[#a + 1] = "--include-dashboard=false"
  else
    a[#a + 1] = string.format("--address=%s:%d", spec.head_ip, R.gcs)
  end
  for _, x in ipairs({
    "--node-ip-address=" .. spec.private_ip, "--num-gpus=" .. spec.gpus,
    "--node-manager-port=" .. R.node_manager, "--object-manager-port=" .. R.object_manager,
    "--runtime-env-agent-port=" .. R.runtime_env_agent, "--dashboard-agent-grpc-port=" .. R.dashboard_agent_grpc,
    "--dashboard-agent-listen-port=" .. R.dashboard_agent_listen, "--metrics-export-port=" .. R.metrics_export,
    "--min-worker-port=" .. R.min_worker, "--max-worker-port=" .. R.max_worker,
  }) do a[#a + 1] = x end
  return table.concat(a, " ")
end

-- The node's whole `docker run`: detached (vLLM's run_cluster.sh keeps it in a terminal of its
-- own) and kept when it exits, so that `docker logs` still has what it printed (c:stop removes it), the vendor's vLLM image (vLLM and Ray in it), host networking and IPC, the GPUs, the
-- Hugging Face cache, the environment above, `ray start --block` as the container's process. spec: vendor, image (nil: the vendor's vLLM image), run_id, rank, private_ip,
-- interface, gpus, head_ip (workers).
function M.ray_command(spec)
  return container.command{ vendor = spec.vendor, purpose = spec.image == nil and "vllm" or nil, image = spec.image,
    detach = true, rm = false, name = M.container_name(spec.run_id, spec.rank), ipc = "host", network = "host", shm_size = "16g",
    env = M.node_env(spec), mounts = { "$HOME/.cache/huggingface:/root/.cache/huggingface" },
    entrypoint = "ray", command = M.ray_start_args(spec) }
end

-- torchrun's multi-node launcher for one node: c10d rendezvous on the head's private address
-- (PyTorch's torchrun docs: --nnodes, --node-rank, --nproc-per-node, --rdzv-backend=c10d,
-- --rdzv-endpoint=HOST:PORT, --rdzv-id shared by every node of the job).
function M.torchrun_command(spec)
  return string.format("torchrun --nnodes=%d --node-rank=%d --nproc-per-node=%d --rdzv-backend=c10d " ..
    "--rdzv-endpoint=%s:%d --rdzv-id=%s", spec.nnodes, spec.node_rank, spec.nproc_per_node, spec.head_ip,
    spec.port or M.TORCHRUN_PORT, spec.rdzv_id)
end

return M
