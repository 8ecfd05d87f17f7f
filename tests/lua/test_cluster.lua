-- runara.cluster: the pure planning (options, firewall ports, the Ray and torchrun command lines,
-- what SSH_CONNECTION, `ip -o -4 addr show` and `ray status` say) and vllm.start's multi-node
-- options, each error at the caller's line before anything is created or started. The `ray
-- status` texts are real ones from public Ray and vLLM threads (fixtures/ray/, sources in
-- tests/fixtures/SOURCES.md).
local t = require("t")
local cluster = require("runara.cluster")
local plan = require("runara.cluster_plan")
local vllm = require("runara.vllm")

local HERE = "test_cluster.lua:%d+:"

local function has(text, plain) return tostring(text):find(plain, 1, true) ~= nil end

local function opts(extra)
  local o = { nodes = 2, size = "gpu-mi300x8-1536gb", image = "gpu-amd-base", region = "atl1" }
  for k, v in pairs(extra or {}) do o[k] = v end
  for k, v in pairs(extra or {}) do if v == false then o[k] = nil end end
  return o
end

local function rejects(o, plain)
  local err = t.raises(function() cluster.create(o) end, plain, HERE)
  t.match(err, "cluster.create: ", "prefix")
  -- Refused by the options themselves: the cloud (no token in this test) was never asked.
  t.truthy(not has(err, "token"), "no droplet call before the error: " .. err)
  return err
end

t.test("nodes > 1 needs an 8-GPU size: multi-node GPU droplets come in multiples of 8 GPUs", function()
  local err = rejects(opts{ size = "gpu-mi300x1-192gb" }, "multi-node GPU droplets come only in multiples of 8 GPUs")
  t.truthy(has(err, "gpu-mi300x1-192gb has 1 GPU;"), err)
  err = rejects(opts{ size = "s-4vcpu-8gb" }, "s-4vcpu-8gb has no GPUs")
  t.truthy(has(err, "nodes = 1"), "names the way out")
  t.eq(plan.create_problem(opts{ nodes = 1, size = "gpu-mi300x1-192gb" }), nil, "one node of any size")
  t.eq(plan.create_problem(opts{ size = "gpu-h100x8-640gb" }), nil, "H100x8")
  t.eq(plan.create_problem(opts{ nodes = 4 }), nil, "MI300Xx8")
end)

t.test("option errors, with did-you-mean", function()
  rejects(nil, "cluster.create: options must be a table, got nil")
  rejects(opts{ node = 2 }, "unknown option 'node' (did you mean 'nodes'?)")
  rejects(opts{ nodes = 0 }, "option 'nodes' must be a whole number of machines >= 1, got 0")
  rejects(opts{ nodes = 1.5 }, "option 'nodes' must be a whole number")
  rejects(opts{ size = false }, "option 'size' is required")
  rejects(opts{ region = "" }, "option 'region' is required")
  rejects(opts{ ports = 8000 }, "option 'ports' must be a list")
  rejects(opts{ ports = { 8000, 70000 } }, "option 'ports': item 2 is 70000, not a port")
  rejects(opts{ ports = { "9010-9000" } }, "option 'ports': item 1 is \"9010-9000\"")
  rejects(opts{ vpc = 7 }, "option 'vpc' must be the name of an existing VPC")
  rejects(opts{ ip_range = "10.0.0.0" }, "option 'ip_range' must be a CIDR block")
  rejects(opts{ vpc = "mine", ip_range = "10.0.0.0/24" }, "an existing VPC ('vpc') keeps its own")
  rejects(opts{ interface = "eth1; reboot" }, "option 'interface' must be a network interface name")
  rejects(opts{ timeout = -1 }, "option 'timeout' must be a number of seconds above 0")
end)

t.test("the firewall's ports: Ray's pinned ports, vLLM, torchrun, the collectives', then the script's", function()
  local p = plan.firewall_ports({ 9000, "29500", 8000, "7000-7010" })
  local words = {}
  for i, x in ipairs(p) do words[i] = tostring(x) end
  t.eq(table.concat(words, ","), "6379,6380-6385,10002-10999,8000,29500,32768-60999,9000,7000-7010")
  t.truthy(plan.port_open(p, 6379) and plan.port_open(p, 6383) and plan.port_open(p, 10500), "Ray's")
  t.truthy(plan.port_open(p, 29500) and plan.port_open(p, 45000), "torchrun's and NCCL's")
  t.truthy(not plan.port_open(p, 6386) and not plan.port_open(p, 22), "nothing else")
end)

t.test("SSH_CONNECTION gives the controller's address", function()
  t.eq(plan.controller_address("203.0.113.7 51234 10.116.0.2 22\n"), "203.0.113.7")
  t.eq(plan.controller_address("2001:db8::7 51234 2001:db8::2 22"), "2001:db8::7")
  t.eq(plan.controller_address(""), nil, "empty: not under sshd")
  t.eq(plan.controller_address("203.0.113.7 x 10.0.0.2 22"), nil)
  t.eq(plan.controller_address("$(reboot) 1 2 3"), nil, "only an address")
end)

t.test("the private interface: the one carrying the private address (iproute2's one-line form)", function()
  local text = table.concat({
    "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever",
    "2: eth0    inet 203.0.113.9/20 brd 203.0.127.255 scope global eth0\\       valid_lft forever preferred_lft forever",
    "2: eth0    inet 10.10.0.5/16 brd 10.10.255.255 scope global eth0\\       valid_lft forever preferred_lft forever",
    "3: eth1    inet 10.116.0.2/20 brd 10.116.15.255 scope global eth1\\       valid_lft forever preferred_lft forever",
    "4: docker0    inet 172.17.0.1/16 brd 172.17.255.255 scope global docker0\\       valid_lft forever preferred_lft forever",
  }, "\n")
  t.eq(plan.interface_for(text, "10.116.0.2"), "eth1")
  t.eq(plan.interface_for(text, "10.10.0.5"), "eth0", "the anchor address is on eth0")
  t.eq(plan.interface_for(text, "10.116.0.20"), nil, "a prefix of another address is not it")
  t.eq(plan.interface_for("5: ens4@if9    inet 10.0.0.3/24 scope global ens4", "10.0.0.3"), "ens4", "a veth's @ifN")
end)

t.test("ray status: two nodes and their GPUs (vLLM issue 15217, autoscaler v2's 'Active:')", function()
  local st = plan.parse_ray_status(runara.read_file("fixtures/ray/vllm_issue15217_ray_status_2nodes.txt"))
  t.eq(st.nodes, 2)
  t.eq(st.gpus, 2)
  t.eq(st.gpus_used, 0)
  t.eq(st.pending, 0)
  t.eq(#st.failures, 0)
  t.truthy(plan.ray_ready(st, 2, 2), "2 nodes, 2 GPUs: ready")
  local ok, shows = plan.ray_ready(st, 3, 2)
  t.eq(ok, false)
  t.eq(shows, "2 of 3 node(s) and 2 of 2 GPU(s) joined")
  ok, shows = plan.ray_ready(st, 2, 16)
  t.eq(ok, false, "too few GPUs")
  t.truthy(has(shows, "2 of 16 GPU(s)"), shows)
end)

t.test("ray status: one node, no GPU line, idle section and a per-node block (Ray PR 39638)", function()
  local st = plan.parse_ray_status(runara.read_file("fixtures/ray/ray_pr39638_ray_status_idle.txt"))
  t.eq(st.nodes, 1)
  t.eq(st.gpus, nil, "no GPU resource at all")
  local ok, shows = plan.ray_ready(st, 1, 8)
  t.eq(ok, false)
  t.eq(shows, "1 of 1 node(s) and no of 8 GPU(s) joined")
end)

t.test("ray status: autoscaler v1 (Healthy: counts, pending, failures), the per-node GPU not counted twice", function()
  local st = plan.parse_ray_status(runara.read_file("fixtures/ray/ray_pr36894_ray_status_v1_pending.txt"))
  t.eq(st.nodes, 22, "2 p3.2xlarge + 20 m4.4xlarge")
  t.eq(st.gpus, 2, "the cluster's total, not the Node: block's 0.7/1")
  t.eq(st.pending, 3)
  t.eq(st.failures[1], "p3.2xlarge: RayletUnexpectedlyDied (ip: 1.2.3.6)")
  local _, shows = plan.ray_ready(st, 30, 2)
  t.truthy(has(shows, "3 pending") and has(shows, "recent failures: p3.2xlarge"), shows)
  t.eq(plan.parse_ray_status(nil).nodes, 0, "no text: nothing joined")
  t.eq(plan.parse_ray_status("ConnectionError: Could not find any running Ray instance.").nodes, 0)
end)

local function node(rank, ip)
  return { vendor = "amd", run_id = "abc123", rank = rank, private_ip = ip, interface = "eth1", gpus = 8, head_ip = "10.116.0.2" }
end

t.test("Ray's head and workers: the vendor's vLLM image, host network, the node's address and interface", function()
  local head = plan.ray_command(node(1, "10.116.0.2"))
  for _, want in ipairs({ "docker run -d --name runara-ray-abc123-1 --ipc=host --network=host",
    "--device /dev/kfd", "-e VLLM_HOST_IP=10.116.0.2", "-e NCCL_SOCKET_IFNAME=eth1", "-e GLOO_SOCKET_IFNAME=eth1", "-e HF_TOKEN ",
    "--entrypoint ray rocm/vllm:latest start --block --head --port=6379 --include-dashboard=false --node-ip-address=10.116.0.2 --num-gpus=8",
    "--node-manager-port=6380 --object-manager-port=6381", "--min-worker-port=10002 --max-worker-port=10999" }) do
    t.truthy(has(head, want), "head has " .. want .. ": " .. head)
  end
  local w = node(2, "10.116.0.3")
  w.vendor = "nvidia"
  local worker = plan.ray_command(w)
  t.truthy(has(worker, "--gpus all"), worker)
  t.truthy(has(worker, "vllm/vllm-openai:latest start --block --address=10.116.0.2:6379 --node-ip-address=10.116.0.3"), worker)
  t.truthy(not has(worker, "--head"), "a worker is no head")
  t.truthy(has(worker, "-e VLLM_HOST_IP=10.116.0.3"), "each node its own VLLM_HOST_IP")
  w.image = "rocm/vllm-dev:nightly"
  w.vendor = "amd"
  t.truthy(has(plan.ray_command(w), "--entrypoint ray rocm/vllm-dev:nightly start"), "an image of the caller's")
  -- Every Ray port the command pins is one the firewall opens.
  local ports = plan.firewall_ports()
  for port in (head .. " " .. worker):gmatch("%-%-[%w-]*port=(%d+)") do
    t.truthy(plan.port_open(ports, tonumber(port)), "the firewall opens " .. port)
  end
end)

t.test("torchrun on every node: c10d rendezvous on the head's private address", function()
  t.eq(plan.torchrun_command{ nnodes = 2, node_rank = 1, nproc_per_node = 8, head_ip = "10.116.0.2", rdzv_id = "abc123" },
    "torchrun --nnodes=2 --node-rank=1 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=10.116.0.2:29500 --rdzv-id=abc123")
  t.truthy(has(plan.torchrun_command{ nnodes = 3, node_rank = 0, nproc_per_node = 1, head_ip = "10.0.0.9", port = 29600, rdzv_id = "x" },
    "--rdzv-endpoint=10.0.0.9:29600"), "another port")
end)

-- vllm.start's multi-node options.
local function fake_session()
  local s = { name = "fake-head", calls = {}, spawned = {} }
  function s:exec() self.calls[#self.calls + 1] = "exec" error("fake session: exec called", 0) end
  function s:spawn(cmd)
    self.calls[#self.calls + 1] = "spawn"
    self.spawned[#self.spawned + 1] = cmd
    return { running = function() return false end, output = function() return { stdout = "placement group\n" } end,
             kill = function() end, wait = function() return {} end }
  end
  function s:forward() return "http://127.0.0.1:1" end
  return s
end

local MODEL = "meta-llama/Llama-3.1-405B-Instruct"
local function vrejects(o, plain)
  local s = fake_session()
  o.model = o.model or MODEL
  local err = t.raises(function() vllm.start(s, o) end, plain, HERE)
  t.eq(#s.calls, 0, "remote calls before the error (" .. plain .. ")")
  return err
end

t.test("vllm.start: pipeline_parallel_size, distributed_executor_backend, ray_container", function()
  vrejects({ pipeline_parallel_size = 0 }, "vllm.start: option 'pipeline_parallel_size' must be a whole number >= 1, got 0")
  vrejects({ distributed_executor_backend = "mpi" }, "option 'distributed_executor_backend' must be \"mp\" (one machine) or \"ray\"")
  vrejects({ ray_container = "runara-ray-x-1" }, "it needs distributed_executor_backend = \"ray\"")
  vrejects({ ray_container = "a b", distributed_executor_backend = "ray" }, "option 'ray_container' must be the name")
  vrejects({ ray_container = "c", distributed_executor_backend = "ray", image = "x" }, "option 'image' does not apply with ray_container")
  vrejects({ ray_container = "c", distributed_executor_backend = "ray", mode = "pip" }, "option 'mode' does not apply")
  vrejects({ host_ip = "10.0.0.2" }, "option 'host_ip' is the driver's VLLM_HOST_IP in a Ray node's container: it needs ray_container")
  vrejects({ ray_container = "c", distributed_executor_backend = "ray", host_ip = "10.0.0.2; reboot" }, "option 'host_ip' must be an IP address")
  vrejects({ pipeline_parallel_sise = 2 }, "unknown option 'pipeline_parallel_sise' (did you mean 'pipeline_parallel_size'?)")
end)

t.test("vllm.start in the Ray head's container: docker exec, TP x PP, the ray backend", function()
  local s = fake_session()
  local err = t.raises(function()
    vllm.start(s, { model = MODEL, gpu = "amd", tensor_parallel_size = 8, pipeline_parallel_size = 2,
      distributed_executor_backend = "ray", ray_container = "runara-ray-abc-1", host_ip = "10.116.0.2", hf_token = "x",
      ready_timeout = 1 })
  end, "exited before it was ready", HERE)
  t.truthy(has(err, "placement group"), "the log's tail in the error")
  local cmd = s.spawned[1]
  t.truthy(has(cmd, "docker exec -e VLLM_HOST_IP=10.116.0.2 -e HF_TOKEN runara-ray-abc-1 vllm serve '" .. MODEL .. "' --host 127.0.0.1 --port 8000"), cmd)
  t.truthy(has(cmd, "--tensor-parallel-size '8' --pipeline-parallel-size '2' --distributed-executor-backend 'ray'"), cmd)
  t.truthy(not has(cmd, "docker run"), "no container of its own")
  -- One machine: the flags without docker exec; options as before.
  s = fake_session()
  pcall(vllm.start, s, { model = MODEL, gpu = "nvidia", tensor_parallel_size = 4, distributed_executor_backend = "mp", ready_timeout = 1 })
  t.truthy(has(s.spawned[1], "docker run") and has(s.spawned[1], "--distributed-executor-backend 'mp'"), s.spawned[1])
  t.truthy(not has(s.spawned[1], "pipeline"), "no pipeline flag unless asked")
end)

t.done()
