-- serving_multinode.lua — one model served by vLLM across several 8-GPU droplets: tensor
-- parallelism inside a node, pipeline parallelism across nodes, on Ray (vLLM's multi-node
-- executor). The droplets are created in parallel into a VPC of the run's own, behind the run's
-- cloud firewall (Ray's, vLLM's and the collectives' ports open only between the run's machines
-- and to this computer); Ray runs in the vendor's vLLM container on every node with host
-- networking, VLLM_HOST_IP and NCCL/Gloo's interface set to the node's private network; vLLM
-- starts only once `ray status` lists every node and GPU.
--
-- What it measures: runara's serving suite (single stream, TTFT, 10 and 32 concurrent) and
-- the concurrency sweep of Dell and Metrum AI's MI300X study (August 2024) against the one server; vLLM's /metrics; every node's GPU power, VRAM
-- and energy (a sampler per node: the head's charted, each node's summary in a table); how long
-- the machines, Ray and the model took. Writes results.json (benchmarks.multinode), report.md,
-- report.html, the sweep's CSV/JSON, each node's Ray log and vLLM's log in logs/. A node that never
-- joins, a firewall that blocks Ray, a refused create: a clear error, a failed report, and every
-- droplet, the firewall and the VPC deleted at the end.
--
-- What it costs: 2 x gpu-mi300x8-1536gb at $15.92/h each ($31.84/h); a 405B model in FP8 takes
-- about 20-40 minutes to download and load, then about 30-60 minutes of tests: about $40-60. Run
-- it with --budget 100 --max-runtime 3h (runara refuses before creating anything when N nodes
-- cannot fit the budget: `runara plan scripts/serving_multinode.lua` shows it).
-- Rehearse it for free with: runara --sim scripts/serving_multinode.lua
-- Params: runara scripts/serving_multinode.lua --help
-- Secrets: --secret HF_TOKEN (gated model; not needed under --sim).
local scenario = require("runara.scenario")
local defaults = require("runara.droplet_defaults")
local suite = require("runara.suite")

local sim = runara.simulated
local PROFILES = {
  full = { levels = { 64, 128, 256, 512 }, max_tokens = 256, requests_per_stream = 2 },
  quick = { levels = { 8, 32 }, max_tokens = 64, requests_per_stream = 1 },
}

local function hf_token()
  local ok, token = pcall(runara.secret, "HF_TOKEN")
  if ok then return token end
  if not sim then runara.log("note: no HF_TOKEN secret (--secret HF_TOKEN); a gated model will fail to download") end
  return nil
end

local function fmt(v, pattern)
  return type(v) == "number" and v == v and string.format(pattern or "%.1f", v) or "—"
end

scenario.run({
  about = "One model over several 8-GPU droplets with vLLM on Ray (tensor parallel within a node, pipeline\n" ..
          "parallel across nodes) in a private network behind the run's firewall: runara's serving suite and\n" ..
          "the concurrency sweep of Dell and Metrum AI's MI300X study (PowerEdge XE9680, August 2024) against it, with every node's GPUs sampled.",
  title = function(p) return string.format("vLLM on %d nodes: %s on %d x %s", p.nodes, p.model, p.nodes, p.size) end,
  on = {}, on_refused = "a cluster is droplets of this run in a private network of its own",
  params = {
    { name = "nodes", type = "integer", default = 2, min = 1, help = "droplets (8 GPUs each)" },
    { name = "size", default = "gpu-mi300x8-1536gb", help = "droplet size (8 GPUs: multi-node GPU droplets come in multiples of 8)" },
    defaults.image_param(),
    defaults.region_param(),
    { name = "vpc", default = function() return nil end, default_help = "a VPC of the run's own",
      help = "the name of an existing VPC of the account to create the droplets in (never deleted; grant it with --allow-vpc NAME)" },
    { name = "model", default = "meta-llama/Llama-3.1-405B-Instruct", help = "Hugging Face model id" },
    { name = "quantization", default = "fp8", help = "vLLM --quantization (none: the model's own precision)" },
    { name = "max_model_len", type = "integer", default = 8192, min = 1, help = "vLLM --max-model-len" },
    { name = "tensor_parallel_size", type = "integer", min = 1, default = function() return nil end,
      default_help = "the GPUs of a node", help = "vLLM --tensor-parallel-size" },
    { name = "pipeline_parallel_size", type = "integer", min = 1, default = function() return nil end,
      default_help = "the nodes", help = "vLLM --pipeline-parallel-size" },
    { name = "vllm_image", default = function() return nil end, default_help = "the vendor's vLLM image",
      help = "the container image Ray and vLLM run in on every node" },
    { name = "ray_timeout", type = "number", default = 600, min = 1, help = "seconds for every node to join Ray" },
    { name = "ready_timeout", type = "number", default = 3600, min = 1, help = "seconds for the server to answer" },
    { name = "profile", choices = { "full", "quick" }, default = function() return sim and "quick" or "full" end,
      default_help = "full; quick on the simulated cloud", help = "the suite's test sizes and the sweep's, or shortened ones" },
    { name = "levels", type = "integers", min = 1, default = function() return nil end,
      default_help = "64,128,256,512; 8,32 in the quick profile", help = "the sweep's concurrency levels" },
    { name = "input_tokens", type = "integer", default = 1024, min = 1, help = "the sweep's mean prompt length in tokens" },
    { name = "remote", type = "boolean", default = true, help = "load from the head itself (runara-agent)" },
  },
}, function(sc)
  local P, rep = sc.params, sc.report
  local profile = PROFILES[P.profile]
  local levels = P.levels or profile.levels
  -- The quick profile is a rehearsal: 30 minutes bound it, and so its worst-case cost within the
  -- default --budget ($20: two 8-GPU droplets for 30 minutes are $15.92).
  if P.profile == "quick" then watchdog.limit(1800) end
  local HF_TOKEN = hf_token()  -- asked for before anything is created
  local quantization = P.quantization ~= "none" and P.quantization or nil
  rep:metadata{ model = P.model, quantization = quantization and quantization:upper() or nil,
    size = string.format("%d x %s", P.nodes, P.size), method = "vLLM on Ray across nodes (tensor parallel x pipeline parallel)" }
  local figures = { nodes = P.nodes, size = P.size }
  rep:set("benchmarks.multinode", figures)

  rep:phase("boot")
  local started = runara.now()
  local c = sc:cluster{ name = "mn", nodes = P.nodes, size = P.size, image = P.image, region = P.region, vpc = P.vpc }
  figures.machines_s = runara.now() - started
  figures.vpc = { name = c.vpc.name, ip_range = c.vpc.ip_range, owned = c.vpc.owned }
  figures.firewall = { name = c.firewall.name, ports = c.ports }
  local rows = {}
  for i, node in ipairs(c.nodes) do rows[i] = { rank = node.rank, droplet = node.droplet.name, private_ip = node.private_ip, interface = node.interface } end
  figures.nodes_detail = rows

  rep:phase("ray")
  local ok, err = pcall(c.start_ray, c, { image = P.vllm_image, hf_token = HF_TOKEN, timeout = P.ray_timeout })
  c:save_logs("logs")  -- each node's Ray output, also when a node never joined
  if not ok then error(err, 0) end
  figures.ray_ready_s = c.ray_ready_s
  figures.gpus = c.gpus_per_node * #c.nodes

  rep:phase("model_load")
  local server = c:serve{ model = P.model, quantization = quantization, max_model_len = P.max_model_len, hf_token = HF_TOKEN,
    tensor_parallel_size = P.tensor_parallel_size, pipeline_parallel_size = P.pipeline_parallel_size, ready_timeout = P.ready_timeout }
  figures.tensor_parallel_size, figures.pipeline_parallel_size = server.tensor_parallel_size, server.pipeline_parallel_size
  figures.server_ready_s = server.ready_s
  rep:metadata{ framework = "vLLM " .. server.version .. " on Ray", server_ready_s = server.ready_s }
  local vm = metrics.start(server.url .. "/metrics", { interval = 1, prefix = "vllm:" })

  local loaded, failure = pcall(function()
    suite.run(server, { report = rep, gpu = c.head.gpu, profile = P.profile, remote = P.remote })
    suite.sweep(server, { concurrency = levels, report = rep, gpu = c.head.gpu, remote = P.remote, input_tokens = P.input_tokens,
      max_tokens = profile.max_tokens, requests_per_stream = profile.requests_per_stream })
  end)
  if not loaded then
    -- A load that failed because a node (and with it vLLM) went: say so, with what the cluster shows.
    local why = c:diagnose(server)
    pcall(rep.add_server_metrics, rep, vm:stop())
    pcall(server.download_log, server, "logs/vllm.log")
    c:save_logs("logs")
    error(why and (tostring(failure) .. "\n" .. why) or failure, 0)
  end
  rep:add_server_metrics(vm:stop())
  rep:phase("done")
  pcall(server.download_log, server, "logs/vllm.log")

  -- Every node's GPUs: the head's charted, each node's whole-run summary in a table.
  local gpu_rows, per_node = {}, {}
  for _, node in ipairs(c.nodes) do
    if node.gpu then
      local g = node.gpu:stop()
      node.gpu = nil
      if node.rank == 1 then rep:add_gpu(g) rep.gpu_sampler = nil end
      local s = g.summary or {}
      per_node[node.rank] = { rank = node.rank, droplet = node.droplet.name, gpus = #(s.gpus or {}), mean_power_w = s.mean_power_w,
        peak_vram_bytes = s.peak_vram_bytes, energy_j = s.energy_j }
      gpu_rows[#gpu_rows + 1] = { tostring(node.rank), node.droplet.name, tostring(node.private_ip), fmt(#(s.gpus or {}), "%d"),
        fmt(s.mean_power_w, "%.0f"), fmt(s.peak_vram_bytes and s.peak_vram_bytes / 2 ^ 30), fmt(s.energy_j and s.energy_j / 1000) }
    end
  end
  figures.gpu_per_node = per_node
  rep:set("benchmarks.multinode", figures)
  rep:add_table("GPUs per node", {
    columns = { "node", "droplet", "private address", "GPUs", "mean power (W, all GPUs)", "peak VRAM (GiB)", "energy (kJ)" },
    rows = gpu_rows,
    caption = string.format("Each node's GPUs over the whole run, sampled on the node itself; vLLM with tensor parallel %s " ..
      "x pipeline parallel %s on Ray across %d nodes (node 1 is Ray's head and serves the API).",
      tostring(server.tensor_parallel_size), tostring(server.pipeline_parallel_size), #c.nodes),
  })
  c:stop()
end)
