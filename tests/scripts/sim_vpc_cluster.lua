-- Two simulated 8-GPU droplets (runara --sim) rendezvousing by private address, as runara.cluster
-- does on the real cloud: the Ray head and worker in the vendor container with host networking,
-- `ray status`, multi-node vLLM over Ray, torchrun across the nodes. Used by
-- tests/end_to_end/test_sim_vpc.cpp; params (runara.params):
--   mode      cluster (default) | fault | two_vpcs | torchrun | firewall (the run's VPC and firewall)
--   region2   the worker's region (default: the head's, so the same default VPC)
--   fault_wait seconds to wait after vLLM answers (mode fault)
-- Prints "TAG code=N", "TAG out=…" and "TAG err=…" blocks for the test to read.
local P = runara.params
local mode = P.mode or "cluster"
local size, image = "gpu-h100x8-640gb", "gpu-h100x8-base"
-- mode firewall: the run's own VPC, and a firewall that first leaves Ray's port closed.
local vpc = mode == "firewall" and droplet.vpc{ region = "nyc2" } or nil
if vpc then droplet.firewall{ ports = { 8265, "29500-29510" }, sources = { "203.0.113.7" } } end
local head = droplet.create{ name = "head", size = size, image = image, region = "nyc2", vpc = vpc }
local work = droplet.create{ name = "work", size = size, image = image, region = P.region2 or "nyc2", vpc = vpc }
print("head_ip=" .. head.private_ip .. " work_ip=" .. work.private_ip)
local h = ssh.connect(head, { timeout = 30 })
local w = ssh.connect(work, { timeout = 30 })

local function show(tag, r)
  print(tag .. " code=" .. tostring(r.code))
  print(tag .. " out=" .. r.stdout)
  print(tag .. " err=" .. r.stderr)
end
local function run(s, tag, cmd) local r = s:exec(cmd, { check = false, quiet = true }) show(tag, r) return r end

-- vLLM's run_cluster.sh: the node's Ray in the vendor container, host network, --block.
local function ray_node(name, ip, args)
  return "docker run -d --name " .. name .. " --network host --gpus all --shm-size 10.24g --entrypoint /bin/bash" ..
    " -e VLLM_HOST_IP=" .. ip .. " vllm/vllm-openai:latest -c 'ray start --block " .. args ..
    " --node-ip-address=" .. ip .. " --num-gpus=8'"
end
local serve = "docker run %s --name vllm --network host --gpus all -e VLLM_HOST_IP=" .. head.private_ip ..
  " --entrypoint vllm vllm/vllm-openai:latest serve meta-llama/Llama-3.1-405B-Instruct --tensor-parallel-size 8" ..
  " --pipeline-parallel-size 2 --distributed-executor-backend ray --port 8000"
local function nodes_in(status) return select(2, status:gsub("\n 1 node_", "")) end

if mode == "torchrun" then
  local function torchrun(rank, id)
    return "docker run --rm --gpus all --network host nvcr.io/nvidia/pytorch:24.10-py3 torchrun --nnodes=2" ..
      " --node-rank=" .. rank .. " --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=" .. head.private_ip ..
      ":29500 --rdzv-id=" .. id .. " /workspace/train_bench.py --parts ddp --sizes small"
  end
  w:exec("docker run -d --name rank1 " .. torchrun(1, "job1"):sub(#"docker run " + 1), { quiet = true })
  run(h, "rank0", torchrun(0, "job1"))
  runara.sleep(0.5)
  run(w, "rank1", "docker logs rank1")
  run(h, "alone", torchrun(0, "job2"))           -- the other node never comes
  run(w, "nohost", torchrun(1, "job3"))          -- no store at the endpoint
  return
end

h:exec(ray_node("ray-head", head.private_ip, "--head --port=6379"), { quiet = true })
for _ = 1, 50 do
  if nodes_in(h:exec("ray status", { check = false, quiet = true }).stdout) == 1 then break end
  runara.sleep(0.1)
end
if mode == "firewall" then
  local join = ray_node("ray-worker", work.private_ip, "--address=" .. head.private_ip .. ":6379"):gsub("-d ", "", 1)
  run(w, "closed", join)
  droplet.firewall{ ports = { 6379, 8265, "29500-29510" }, sources = { "203.0.113.7" } }  -- replaces the rules
  w:exec(ray_node("ray-worker", work.private_ip, "--address=" .. head.private_ip .. ":6379"), { quiet = true })
  for _ = 1, 50 do
    if nodes_in(h:exec("ray status", { check = false, quiet = true }).stdout) == 2 then break end
    runara.sleep(0.1)
  end
  run(h, "opened", "ray status")
  -- A droplet of the same region outside the run's VPC (the region's default VPC): never a peer.
  local other = droplet.create{ name = "other", size = size, image = image, region = "nyc2" }
  print("other_ip=" .. other.private_ip)
  run(ssh.connect(other, { timeout = 30 }), "outsider", join)
  return
end
if mode == "two_vpcs" then
  run(w, "join", ray_node("ray-worker", work.private_ip, "--address=" .. head.private_ip .. ":6379"):gsub("-d ", "", 1))
  return
end
if mode == "cluster" then
  -- An address where no head runs: Ray's GCS failure after its timeout.
  run(w, "wrong", "docker run --rm --network host --gpus all --entrypoint ray vllm/vllm-openai:latest start" ..
      " --address=10.116.16.250:6379 --num-gpus=8")
  -- vLLM over Ray before the worker joined: the placement group never comes.
  run(h, "lonely", string.format(serve, "--rm"))
end
w:exec(ray_node("ray-worker", work.private_ip, "--address=" .. head.private_ip .. ":6379"), { quiet = true })
for _ = 1, 50 do
  if nodes_in(h:exec("ray status", { check = false, quiet = true }).stdout) == 2 then break end
  runara.sleep(0.1)
end
run(h, "status", "docker exec ray-head ray status")
run(w, "worker_status", "ray status")
h:exec(string.format(serve, "-d"), { quiet = true })
local healthy = false
for _ = 1, 150 do
  if h:exec("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8000/health", { check = false, quiet = true }).stdout == "200" then
    healthy = true
    break
  end
  runara.sleep(0.1)
end
print("healthy=" .. tostring(healthy))
run(h, "completion", "curl -s http://127.0.0.1:8000/v1/completions -H 'Content-Type: application/json'" ..
    " -d '{\"model\": \"meta-llama/Llama-3.1-405B-Instruct\", \"prompt\": \"hi\", \"max_tokens\": 4}'")
run(h, "serving_status", "ray status")
-- Not IP routing: a real program on the worker finds no route to the head's private address.
run(w, "curl_peer", "curl -s -m 2 -o /dev/null -w '%{http_code}' http://" .. head.private_ip .. ":8000/health")
if mode == "fault" then
  runara.sleep(tonumber(P.fault_wait or "3"))
  run(h, "after_fault", "curl -s -m 2 -o /dev/null -w '%{http_code}' http://127.0.0.1:8000/health")
  run(h, "vllm_log", "docker logs vllm")
  run(h, "fault_status", "ray status")
end
