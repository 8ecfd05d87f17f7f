-- runara.cluster: several droplets of the run as one machine for distributed engines — created
-- into a private network (a VPC of the run's own, or a named one of the account) and logged into
-- in parallel, behind the run's cloud firewall (Ray's, vLLM's, torchrun's and the collectives'
-- ports open between the run's machines and to this computer only), then a Ray cluster in the
-- vendor's vLLM container on every node, or torchrun's rendezvous on the head's private address.
--
--   local cluster = require("runara.cluster")
--   local c = cluster.create{ nodes = 2, size = "gpu-mi300x8-1536gb", image = "gpu-amd-base", region = "atl1" }
--   c:start_ray{ hf_token = runara.secret("HF_TOKEN") }    -- returns once `ray status` lists every node and GPU
--   local server = c:serve{ model = "meta-llama/Llama-3.1-405B-Instruct", quantization = "fp8" }  -- TP 8 x PP 2 on Ray
--   ...
--   c:stop()                                                -- vLLM, then every node's Ray container
--
-- Every check of the options, and the budget for all N machines (droplet.check), comes before
-- anything is created. The droplets, the firewall and the VPC are the run's: teardown deletes
-- them on every ending (droplets, then the firewall, then the VPC), so an error here only stops
-- what runs on the machines and raises. The pure half is runara.cluster_plan
-- (tests/lua/test_cluster.lua). See docs/stdlib.md#runaracluster.
local errors = require("runara.errors")
local pure = require("runara.cluster_plan")
local container = require("runara.container")
local show = errors.show

local M = {}
M.RAY, M.TORCHRUN_PORT = pure.RAY, pure.TORCHRUN_PORT
M.firewall_ports, M.parse_ray_status, M.torchrun_command = pure.firewall_ports, pure.parse_ray_status, pure.torchrun_command

local Cluster = {}
Cluster.__index = Cluster

local function lines_tail(text, n)
  local lines = {}
  for line in tostring(text or ""):gmatch("[^\n]+") do lines[#lines + 1] = line end
  return table.concat(lines, "\n", math.max(1, #lines - (n or 20) + 1))
end

-- A node's words for a message: "node 2 of 2 (droplet NAME, 10.x.y.z)".
local function node_words(c, node)
  return string.format("node %d of %d (%s, %s)", node.rank, #c.nodes, node.droplet and ("droplet " .. node.droplet.name) or node.session.name,
    tostring(node.private_ip))
end

-- An error of a primitive called here, without the position of this file it may carry.
local function clean(err)
  return (tostring(err):gsub("^[^\n]-cluster%.lua:%d+: ", ""))
end

-- One machine: created into the VPC, logged into (its cloud-init finished). Runs as a task.
local function bring_up(opts, vpc, rank)
  local d = droplet.create{ name = opts.name or "node", size = opts.size, image = opts.image, region = opts.region, vpc = vpc,
    timeout = opts.timeout }
  local s = ssh.connect(d, { wait_cloud_init = true, name = string.format("%s-%d", opts.name or "node", rank) })
  return { rank = rank, droplet = d, session = s, private_ip = d.private_ip }
end

-- The interface that carries the node's private address (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME);
-- nil and why not.
local function find_interface(node, wanted)
  if wanted then return wanted end
  local r = node.session:exec("ip -o -4 addr show 2>&1", { quiet = true, check = false })
  local name = pure.interface_for(r.stdout, node.private_ip)
  if name then return name end
  return nil, string.format("no network interface of %s carries its private address %s (`ip -o -4 addr show`: %s); " ..
    "give the interface with option 'interface' (DigitalOcean's droplets: eth1)", node.session.name, tostring(node.private_ip),
    lines_tail(r.stdout, 4):gsub("\n", " | "))
end

-- cluster.create's work; the cluster, or nil and the message.
local function create(opts)
  local bad = pure.create_problem(opts)
  if bad then return nil, "cluster.create: " .. bad end
  -- The worst case of all N machines against --budget and --max-droplets, before anything exists.
  local fits, why = pcall(droplet.check, { size = opts.size, count = opts.nodes, region = opts.region })
  if not fits then return nil, "cluster.create: " .. clean(why) end  -- "N x SIZE do not fit: …", naming the budget
  local made, vpc = pcall(droplet.vpc, { region = opts.region, existing = opts.vpc, ip_range = opts.ip_range })
  if not made then return nil, "cluster.create: " .. clean(vpc) end
  local c = setmetatable({ nodes = {}, vpc = vpc, size = opts.size, gpus_per_node = pure.size_gpus(opts.size) }, Cluster)
  runara.log(string.format("cluster: %d x %s in %s (VPC %s, %s)", opts.nodes, opts.size, opts.region, vpc.name,
    vpc.owned and "the run's own" or "existing, kept"))
  local tasks = {}
  for rank = 1, opts.nodes do tasks[rank] = runara.spawn(bring_up, opts, vpc, rank) end
  local failure
  for rank, task in ipairs(tasks) do
    local ok, node = pcall(task.join, task)
    if ok then c.nodes[rank] = node
    elseif not failure then failure = string.format("cluster.create: node %d of %d: %s", rank, opts.nodes, clean(node)) end
  end
  if failure then return nil, failure end
  c.head = c.nodes[1]
  -- The controller: this computer's address as the first machine sees it (sshd's SSH_CONNECTION).
  local r = c.head.session:exec("echo \"$SSH_CONNECTION\"", { quiet = true })
  c.controller = pure.controller_address(r.stdout)
  if not c.controller then
    return nil, "cluster.create: cannot tell this computer's address from " .. c.head.session.name ..
      "'s SSH_CONNECTION (" .. show(r.stdout) .. "); the firewall needs it to keep ssh open"
  end
  for _, node in ipairs(c.nodes) do
    local iface, no = find_interface(node, opts.interface)
    if not iface then return nil, "cluster.create: " .. no end
    node.interface = iface
  end
  c.ports = pure.firewall_ports(opts.ports)
  local fw_made, fw = pcall(droplet.firewall, { ports = c.ports, sources = { c.controller } })
  if not fw_made then return nil, "cluster.create: " .. clean(fw) end
  c.firewall = fw
  runara.log(string.format("cluster: %d node(s) up (%s); firewall %s opens %s to them and %s", #c.nodes,
    (function() local t = {} for i, n in ipairs(c.nodes) do t[i] = n.private_ip end return table.concat(t, ", ") end)(),
    c.firewall.name, (function() local t = {} for i, p in ipairs(c.ports) do t[i] = tostring(p) end return table.concat(t, ",") end)(),
    c.controller))
  return c
end

-- Creates the cluster (see the top of this file); errors at the caller's line.
function M.create(opts)
  local c, message = create(opts)
  if not c then error(message, 2) end
  return c
end

-- For a wrapper (runara.scenario's sc:cluster): the cluster, or nil and the message.
function M.try_create(opts)
  return create(opts)
end

M.check_options = function(opts)
  local bad = pure.create_problem(opts)
  return bad and "cluster.create: " .. bad or nil
end

local RAY_OPTS = { image = true, gpu = true, gpus_per_node = true, timeout = true, hf_token = true, poll = true }

-- `ray status` on the head (in its container); the text, or nil and what went wrong.
local function ray_status(c)
  local r = c.head.session:exec("docker exec " .. c.head.container .. " ray status 2>&1", { quiet = true, check = false, timeout = 60 })
  if r.code ~= 0 then return nil, lines_tail(r.stdout, 3) end
  return r.stdout
end

-- What a node's Ray container printed (docker logs), or why it cannot be read.
local function ray_output(node)
  local ok, r = pcall(function()
    return node.session:exec("docker logs " .. node.container .. " 2>&1", { quiet = true, check = false, timeout = 60 })
  end)
  if not ok then return "(its machine did not answer: " .. tostring(r):match("[^\n]*") .. ")" end
  return r.stdout or ""
end

-- The last lines a node's Ray container printed.
local function ray_tail(node, n)
  local tail = lines_tail(ray_output(node), n or 20)
  return tail ~= "" and tail or "(it printed nothing)"
end

-- Whether a node's Ray container still runs (`docker ps` lists it).
local function ray_running(node)
  local r = node.session:exec("docker ps --format '{{.Names}}' 2>/dev/null | grep -qw -- " .. node.container,
    { quiet = true, check = false, timeout = 60 })
  return r.code == 0
end

-- Starts one node's Ray: its container, detached (`docker run -d`, as vLLM's run_cluster.sh runs
-- it in a terminal of its own), `ray start --block` in the foreground of the container.
local function start_node(c, node, o)
  node.container = pure.container_name(runara.run_id, node.rank)
  local spec = { vendor = c.vendor, image = o.image, run_id = runara.run_id, rank = node.rank, private_ip = node.private_ip,
    interface = node.interface, gpus = c.gpus_per_node, head_ip = c.head.private_ip }
  node.ray_command = pure.ray_command(spec)
  node.session:exec("mkdir -p \"$HOME/.cache/huggingface\"; docker rm -f " .. node.container .. " >/dev/null 2>&1; true", { quiet = true })
  local r = node.session:exec(node.ray_command, { quiet = true, check = false, timeout = 1800,
    env = o.hf_token and { HF_TOKEN = o.hf_token } or nil })
  node.ray = true
  if r.code ~= 0 then
    return nil, string.format("c:start_ray: docker could not start Ray on %s (exit %s):\n%s", node_words(c, node),
      tostring(r.code), lines_tail((r.stdout or "") .. (r.stderr or ""), 12))
  end
  return true
end

-- Waits until `ray status` lists `want_nodes` nodes and `want_gpus` GPUs; nil and the message when
-- a node's Ray exited or the time ran out (the failing node's last lines in it).
local function wait_ray(c, want_nodes, want_gpus, nodes, o)
  local started, last_note = runara.now(), runara.now()
  local timeout, poll = o.timeout or pure.defaults.join_timeout, o.poll or (runara.simulated and 0.5 or 3)
  while true do
    for _, node in ipairs(nodes) do
      if not ray_running(node) then
        return nil, string.format("c:start_ray: Ray on %s exited before the cluster was ready%s; its last lines:\n%s",
          node_words(c, node), node.rank > 1 and string.format(" (a worker that cannot reach the head's %s:%d: check " ..
            "that the run's firewall opens Ray's ports between the machines)", c.head.private_ip, pure.RAY.gcs) or "",
          ray_tail(node))
      end
    end
    local text, err = ray_status(c)
    local st = pure.parse_ray_status(text)
    local ok, shows = pure.ray_ready(st, want_nodes, want_gpus)
    if text and ok then c.ray_status = text return runara.now() - started end
    local waited = runara.now() - started
    if waited > timeout then
      local tails = {}
      for _, node in ipairs(nodes) do
        if node.rank > 1 or #nodes == 1 then
          tails[#tails + 1] = string.format("-- %s, Ray's last lines:\n%s", node_words(c, node), ray_tail(node, 12))
        end
      end
      return nil, string.format("c:start_ray: the Ray cluster was not ready after %d s: `ray status` on %s shows %s " ..
        "(want %d nodes, %d GPUs). A node that never joins cannot reach the head's %s:%d: check the run's firewall " ..
        "opens Ray's ports (%s) between the machines.\n%s", math.floor(waited), node_words(c, c.head),
        text and shows or ("no answer: " .. tostring(err)), want_nodes, want_gpus, c.head.private_ip, pure.RAY.gcs,
        table.concat(pure.firewall_ports(), ","), table.concat(tails, "\n"))
    end
    if runara.now() - last_note >= 15 then
      last_note = runara.now()
      runara.log(string.format("cluster: waiting for Ray (%d s): %s", math.floor(waited), text and shows or "the head has not answered yet"))
    end
    runara.sleep(poll)
  end
end

-- c:start_ray's work: true, or nil and the message (everything it started stopped).
local function start_ray(c, o)
  if type(o) ~= "table" then return nil, "c:start_ray: options must be a table, got " .. show(o) end
  local unknown = errors.unknown_option(o, RAY_OPTS)
  if unknown then return nil, "c:start_ray: " .. unknown end
  if o.image ~= nil and (type(o.image) ~= "string" or o.image == "") then return nil, "c:start_ray: option 'image' must be a non-empty string, got " .. show(o.image) end
  for _, k in ipairs({ "timeout", "poll" }) do
    if o[k] ~= nil and not (type(o[k]) == "number" and o[k] > 0) then
      return nil, string.format("c:start_ray: option '%s' must be a number of seconds above 0, got %s", k, show(o[k]))
    end
  end
  if o.gpus_per_node ~= nil and not errors.whole(o.gpus_per_node) then
    return nil, "c:start_ray: option 'gpus_per_node' must be a whole number >= 1, got " .. show(o.gpus_per_node)
  end
  c.gpus_per_node = o.gpus_per_node or c.gpus_per_node
  if not c.gpus_per_node then return nil, "c:start_ray: the size " .. tostring(c.size) .. " names no GPU count; give gpus_per_node" end
  c.vendor = o.gpu
  if not c.vendor then
    local message
    c.vendor, message = container.detect(c.head.session)
    if not c.vendor then return nil, "c:start_ray: " .. message end
  end
  c.ray_image = o.image or container.IMAGES.vllm[c.vendor]
  runara.log(string.format("cluster: starting Ray (%s) on %d node(s), %d GPUs each; head %s:%d", c.ray_image, #c.nodes,
    c.gpus_per_node, c.head.private_ip, pure.RAY.gcs))
  local started, failed = start_node(c, c.head, o)
  if not started then return nil, failed end
  local _, head_failed = wait_ray(c, 1, c.gpus_per_node, { c.head }, o)
  if head_failed then return nil, head_failed end
  for i = 2, #c.nodes do
    started, failed = start_node(c, c.nodes[i], o)
    if not started then return nil, failed end
  end
  local ready_s
  ready_s, failed = wait_ray(c, #c.nodes, c.gpus_per_node * #c.nodes, c.nodes, o)
  if not ready_s then return nil, failed end
  c.ray_ready_s = ready_s
  runara.log(string.format("cluster: Ray ready, %d nodes and %d GPUs (%.1f s)", #c.nodes, c.gpus_per_node * #c.nodes, ready_s))
  return true
end

-- Starts Ray on every node and waits until `ray status` on the head lists every node and GPU.
-- Options: image (default the vendor's vLLM image, which carries Ray), gpu ("amd"/"nvidia";
-- default: by the head's GPU tool), gpus_per_node (default: the size's), timeout (seconds for
-- every node to join, default 600), hf_token (passed to the containers as HF_TOKEN), poll.
function Cluster:start_ray(o)
  local ok, message = start_ray(self, o or {})
  if not ok then
    pcall(self.stop, self)
    error(message, 2)
  end
  return self
end

-- vLLM on the Ray cluster, started in the head's Ray container (runara.vllm with the ray backend):
-- tensor_parallel_size (default the GPUs of a node) x pipeline_parallel_size (default the nodes).
-- Every other option is vllm.start's. Errors at the caller's line.
function Cluster:try_serve(o)
  local vllm = require("runara.vllm")
  if not self.ray_ready_s then
    return nil, "c:serve: Ray is not running on the cluster; call c:start_ray{} first"
  end
  local v = {}
  for k, x in pairs(o or {}) do v[k] = x end
  v.tensor_parallel_size = v.tensor_parallel_size or self.gpus_per_node
  v.pipeline_parallel_size = v.pipeline_parallel_size or #self.nodes
  v.distributed_executor_backend = "ray"
  v.ray_container = self.head.container
  v.host_ip = self.head.private_ip
  v.gpu = v.gpu or self.vendor
  -- Bad sizes are vllm.start's to refuse (below); well-formed ones must fit the cluster's GPUs.
  local want = errors.whole(v.tensor_parallel_size) and errors.whole(v.pipeline_parallel_size) and
    v.tensor_parallel_size * v.pipeline_parallel_size
  if want and want > self.gpus_per_node * #self.nodes then
    return nil, string.format("c:serve: tensor_parallel_size %d x pipeline_parallel_size %d = %d GPUs, and the cluster has %d " ..
      "(%d nodes x %d)", v.tensor_parallel_size, v.pipeline_parallel_size, want, self.gpus_per_node * #self.nodes, #self.nodes,
      self.gpus_per_node)
  end
  local server, message = vllm.try_start(self.head.session, v)
  if not server then return nil, message end
  server.image = self.ray_image  -- the Ray containers' image, which vLLM runs in (for the manifest)
  self.servers = self.servers or {}
  self.servers[#self.servers + 1] = server
  return server
end

function Cluster:serve(o)
  local server, message = self:try_serve(o)
  if not server then error(message, 2) end
  return server
end

-- After a failure while serving: what the cluster says about it (vLLM's exit and last lines,
-- what `ray status` shows now, which node's Ray is gone), or nil when the server still runs.
function Cluster:diagnose(server, wait_s)
  local lines = {}
  local deadline = runara.now() + (wait_s or 10)  -- vLLM takes a moment to exit after a lost actor
  while server and server.process and server.process:running() and runara.now() < deadline do runara.sleep(0.25) end
  if server and server.process and not server.process:running() then
    lines[1] = string.format("vLLM on %s exited; its last lines:\n%s", node_words(self, self.head), server:log_tail(12))
  end
  local ok, text = pcall(ray_status, self)
  if ok and text then
    local st = pure.parse_ray_status(text)
    local ready, shows = pure.ray_ready(st, #self.nodes, (self.gpus_per_node or 0) * #self.nodes)
    if not ready or #st.failures > 0 then lines[#lines + 1] = "`ray status` now: " .. (shows or ("recent failures: " .. table.concat(st.failures, "; "))) end
  end
  for _, node in ipairs(self.nodes) do
    local up, running = pcall(ray_running, node)
    if not (up and running) then
      lines[#lines + 1] = string.format("Ray on %s has stopped (%s)", node_words(self, node), up and "its container is not running" or "its machine does not answer")
    end
  end
  return #lines > 0 and table.concat(lines, "\n") or nil
end

-- Each node's torchrun launcher (rendezvous on the head's private address): a list, in rank order,
-- of { node, command, env } where env holds the node's interface choice for NCCL/Gloo.
-- Options: nproc_per_node (default the GPUs of a node), port (default 29500), rdzv_id.
function Cluster:torchrun(o)
  o = o or {}
  local n = o.nproc_per_node or self.gpus_per_node
  if not errors.whole(n) then error("c:torchrun: option 'nproc_per_node' must be a whole number >= 1, got " .. show(n), 2) end
  local out = {}
  for i, node in ipairs(self.nodes) do
    out[i] = { node = node, command = pure.torchrun_command{ nnodes = #self.nodes, node_rank = i - 1, nproc_per_node = n,
      head_ip = self.head.private_ip, port = o.port, rdzv_id = o.rdzv_id or runara.run_id },
      env = { "NCCL_SOCKET_IFNAME=" .. node.interface, "GLOO_SOCKET_IFNAME=" .. node.interface } }
  end
  return out
end

-- Stops what runs on the machines: the servers, then every node's Ray (its container). The machines, the firewall and the VPC stay for the run's teardown.
function Cluster:stop()
  if self.stopped then return end
  self.stopped = true
  for _, server in ipairs(self.servers or {}) do pcall(server.stop, server) end
  for i = #self.nodes, 1, -1 do
    local node = self.nodes[i]
    if node.ray then
      pcall(function()
        node.session:exec("docker rm -f " .. node.container .. " >/dev/null 2>&1; true", { quiet = true, check = false })
      end)
    end
  end
end

-- Each node's Ray log (what its container printed) into the output folder: logs/ray-node-N.log.
function Cluster:save_logs(folder)
  for _, node in ipairs(self.nodes) do
    if node.ray then
      pcall(runara.write_file, (folder or "logs") .. "/ray-node-" .. node.rank .. ".log", ray_output(node))
    end
  end
end

return M
