-- runara.replicas: the serving architecture of Dell and Metrum AI's MI300X study (PowerEdge XE9680, August 2024) on one machine — N vLLM replicas, each on
-- GPUs of its own (tensor_parallel_size = GPUs / N) on ports 8001 … 8000+N, behind an nginx load
-- balancer on port 9080 that spreads requests round-robin; every replica's /metrics reachable.
--
--   local replicas = require("runara.replicas")
--   local group = replicas.start(s, { model = "meta-llama/Llama-3.3-70B-Instruct", count = 4, gpus = 8 })
--   group:start_metrics()                                    -- a metrics.start sampler per replica
--   suite.sweep(group, { concurrency = { 64, 256 } })         -- the load goes to the balancer
--   local share = group:request_share()                      -- each replica's requests, from /metrics
--   group:stop()                                             -- replicas and balancer stopped
--
-- The plan (which GPUs and port each replica gets) and nginx's configuration are pure functions
-- (replicas.plan, replicas.nginx_config; they live in replicas_plan.lua), unit-tested in
-- tests/lua/test_replicas.lua. The
-- balancer is the official nginx image (a GPU droplet's image has docker, not nginx), or the
-- machine's own nginx with balancer = "host". See docs/stdlib.md#runarareplicas.
local errors = require("runara.errors")
local vllm = require("runara.vllm")
local machine = require("runara.machine")
local pure = require("runara.replicas_plan")
local show = errors.show

local M = {}

M.defaults = pure.defaults
-- The pure half (runara.replicas_plan): each replica's GPUs and port, nginx's configuration.
M.plan, M.nginx_config = pure.plan, pure.nginx_config
local plan, nginx_config = pure.raw_plan, pure.raw_nginx_config

-- The run's own names: a run never stops a container or removes a folder it did not make. The
-- balancer's configuration and the replicas' logs go into a working folder of the group's own
-- (runara.machine.workdir: new, private, removed by its exact path at stop).
local LB_NAME = "runara-lb-" .. runara.run_id
local LB_MOUNT = "/runara-lb"                  -- where the container sees the balancer's folder

-- vllm.start's options that replicas.start sets itself, per replica (its own `port` is the balancer's).
local SET_HERE = { devices = "gpus and count", tensor_parallel_size = "gpus / count",
  container = "the run id", log = "the replica's port" }
local OWN = { count = true, gpus = true, first_port = true, port = true, balancer = true, balancer_image = true,
  balancer_timeout = true }

-- What is wrong with replicas.start's options (a message, without the prefix), or nil.
local function problem(opts)
  if type(opts) ~= "table" then return "options must be a table, got " .. type(opts) end
  local known = {}
  for k in pairs(OWN) do known[k] = true end
  for k in pairs(vllm.KNOWN) do if not SET_HERE[k] then known[k] = true end end
  for k in pairs(opts) do
    if SET_HERE[k] then
      return string.format("option '%s' is set per replica by replicas.start (from %s); leave it out", k, SET_HERE[k])
    end
  end
  local unknown = errors.unknown_option(opts, known)
  if unknown then return unknown end
  local bad = pure.split_problem(opts.count, opts.gpus)
    or pure.port_problem(opts.count, opts.first_port or M.defaults.first_port, opts.port or M.defaults.port)
  if bad then return bad end
  if opts.balancer ~= nil and opts.balancer ~= "docker" and opts.balancer ~= "host" then
    return "option 'balancer' must be \"docker\" (the nginx image) or \"host\" (the machine's own nginx), got " .. show(opts.balancer)
  end
  if opts.balancer_image ~= nil and (type(opts.balancer_image) ~= "string" or opts.balancer_image == "") then
    return "option 'balancer_image' must be a non-empty string, got " .. show(opts.balancer_image)
  end
  if opts.balancer_timeout ~= nil and not (type(opts.balancer_timeout) == "number" and opts.balancer_timeout > 0) then
    return "option 'balancer_timeout' must be a number of seconds above 0, got " .. show(opts.balancer_timeout)
  end
  -- The rest are vLLM's, checked as vllm.start checks them (port 8000 stands in for the replicas').
  local v = { port = opts.first_port or M.defaults.first_port }
  for k, x in pairs(opts) do if not OWN[k] then v[k] = x end end
  local msg = vllm.check_options(v)
  return msg and msg:gsub("^vllm%.start: ", "") or nil
end

-- For a wrapper (e.g. a scenario): the message replicas.start would raise, or nil.
function M.check_options(opts)
  local msg = problem(opts)
  return msg and "replicas.start: " .. msg or nil
end

local Group = {}
Group.__index = Group

-- The balancer's command line: the nginx container (host network, its folder mounted), or the
-- machine's own nginx. Either way nginx stays in the foreground of the ssh process.
local function balancer_command(opts, lb_dir)
  local args = string.format("nginx -p %s/ -c %s/nginx.conf -e %s/error.log -g 'daemon off;'", LB_MOUNT, LB_MOUNT, LB_MOUNT)
  if (opts.balancer or M.defaults.balancer) == "host" then
    -- /usr/sbin, where distributions install nginx, is not on every user's PATH.
    return "PATH=$PATH:/usr/sbin " .. (args:gsub(LB_MOUNT:gsub("%p", "%%%0"), (("\"" .. lb_dir .. "\""):gsub("%%", "%%%%"))))
  end
  return string.format("docker run --rm --name %s --network=host -v \"%s:%s\" %s %s", LB_NAME, lb_dir, LB_MOUNT,
    opts.balancer_image or M.defaults.balancer_image, args)
end

-- The balancer's last lines: what nginx printed, then its error log.
local function balancer_tail(group)
  local out = group.balancer.process:output()
  local text = (out.stdout or "") .. (out.stderr or "")
  local ok, r = pcall(function()
    return group.session:exec("tail -n 20 \"" .. group.lb_dir .. "/error.log\" 2>/dev/null; true", { quiet = true, check = false })
  end)
  if ok and r.stdout then text = text .. r.stdout end
  local lines = {}
  for line in text:gmatch("[^\n]+") do lines[#lines + 1] = line end
  return table.concat(lines, "\n", math.max(1, #lines - 19))
end

-- Starts nginx and waits until a request through it reaches a replica; nil and why not.
local function start_balancer(group, opts)
  local s = group.session
  s:exec("mkdir -p \"" .. group.lb_dir .. "/tmp\" && cat > \"" .. group.lb_dir .. "/nginx.conf\"",
    { stdin = group.config, quiet = true })
  group.balancer = { command = balancer_command(opts, group.lb_dir), port = group.port }
  runara.log(string.format("replicas: starting the nginx balancer on %s port %d (%s)", s.name, group.port,
    (opts.balancer or M.defaults.balancer) == "host" and "the machine's nginx" or opts.balancer_image or M.defaults.balancer_image))
  group.balancer.process = s:spawn(group.balancer.command, { quiet = true })
  group.url = s:forward(group.port)
  local started, timeout = runara.now(), opts.balancer_timeout or 120
  while true do
    local ok, r = pcall(metrics.get, group.url .. "/v1/models", { timeout = 5 })
    if ok and r.status == 200 then return true end
    if not group.balancer.process:running() then
      return nil, string.format("replicas.start: the nginx balancer on %s exited before it answered on port %d; its last lines:\n%s",
        s.name, group.port, balancer_tail(group))
    end
    if runara.now() - started > timeout then
      return nil, string.format("replicas.start: the nginx balancer on %s did not answer on port %d after %d s (GET /v1/models: %s); its last lines:\n%s",
        s.name, group.port, math.floor(runara.now() - started), ok and ("HTTP " .. r.status) or tostring(r):match("[^\n]*"),
        balancer_tail(group))
    end
    runara.sleep(runara.simulated and 0.2 or 1)
  end
end

-- Every replica started at once (each waits for its own readiness); nil and the first failure,
-- naming the replica, its GPUs and its log's tail.
local function start_replicas(group, opts, vendor)
  local tasks = {}
  for i, r in ipairs(group.plan) do
    local v = { gpu = vendor, port = r.port, devices = r.devices, tensor_parallel_size = r.tensor_parallel_size > 1 and r.tensor_parallel_size or nil,
      container = "runara-vllm-" .. runara.run_id .. "-" .. r.port, log = group.dir .. "/vllm-" .. r.port .. ".log" }
    for k, x in pairs(opts) do if not OWN[k] then v[k] = x end end
    tasks[i] = runara.spawn(function() return vllm.try_start(group.session, v) end)
  end
  local failure
  for i, task in ipairs(tasks) do
    local ok, server, message = pcall(task.join, task)
    if ok and server then
      group.servers[i] = server
    elseif not failure then
      local r = group.plan[i]
      local why = ok and message or tostring(server)
      failure = string.format("replicas.start: replica %d of %d (port %d, GPUs %s) failed: %s", i, #group.plan, r.port,
        table.concat(r.devices, ","), (tostring(why):gsub("^vllm%.start: ", "")))
    end
  end
  return failure == nil, failure
end

-- replicas.start's work: the group, or nil and the message (everything it started stopped).
local function launch(s, opts)
  local bad = problem(opts)
  if bad then return nil, "replicas.start: " .. bad end
  if type(s) ~= "userdata" and not (type(s) == "table" and type(s.exec) == "function") then
    return nil, "replicas.start: argument 'session' must be an ssh session (ssh.connect), got " .. show(s)
  end
  local vendor = opts.gpu
  if not vendor then
    local message
    vendor, message = require("runara.container").detect(s)
    if not vendor then return nil, "replicas.start: " .. message end
  end
  local group = setmetatable({ session = s, model = opts.model, port = opts.port or M.defaults.port, servers = {},
    count = opts.count, gpus = opts.gpus, tensor_parallel_size = opts.gpus / opts.count }, Group)
  group.plan = plan{ count = opts.count, gpus = opts.gpus, vendor = vendor, first_port = opts.first_port }
  local dir, why = machine.try_workdir(s, "replicas")
  if not dir then return nil, "replicas.start: " .. why end
  group.dir, group.lb_dir = dir, dir .. "/lb"
  local ports = {}
  for i, r in ipairs(group.plan) do ports[i] = r.port end
  group.config = nginx_config(ports, group.port)
  runara.log(string.format("replicas: %d x vLLM (tensor_parallel_size %d) on %s, ports %d-%d, behind nginx on %d",
    opts.count, group.tensor_parallel_size, s.name, ports[1], ports[#ports], group.port))
  local ok, message = start_replicas(group, opts, vendor)
  if ok then ok, message = start_balancer(group, opts) end
  if not ok then
    pcall(group.stop, group)
    return nil, message
  end
  group.version = group.servers[1].version
  return group
end

-- Starts the replicas and the balancer; returns the group (url: the balancer's, through a
-- tunnel; model; port; servers: the vllm servers, in order; plan). Errors carry the caller's line;
-- whatever it started is stopped before it raises.
function M.start(s, opts)
  local group, message = launch(s, opts)
  if not group then error(message, 2) end
  return group
end

-- For a wrapper: the group, or nil and the message replicas.start would raise.
function M.try_start(s, opts)
  return launch(s, opts)
end

-- A metrics.start sampler on every replica's /metrics (options as metrics.start's; default
-- interval 1 s, prefix "vllm:"): group.samplers, in the replicas' order.
function Group:start_metrics(opts)
  opts = opts or { interval = 1, prefix = "vllm:" }
  self.samplers = {}
  for i, server in ipairs(self.servers) do self.samplers[i] = metrics.start(server.url .. "/metrics", opts) end
  return self.samplers
end

-- Stops the samplers; their results, in the replicas' order.
function Group:stop_metrics()
  local out = {}
  for i, sampler in ipairs(self.samplers or {}) do out[i] = sampler:stop() end
  self.samplers = nil
  return out
end

-- Each replica's share of the requests, read from its /metrics now (vllm:request_success_total,
-- every finished_reason; a fresh replica starts at 0): a list of { replica, port, devices,
-- requests, share } (share of the group's total, 0 … 1).
function Group:request_share()
  local rows, total = {}, 0
  for i, server in ipairs(self.servers) do
    local ok, m = pcall(metrics.scrape, server.url .. "/metrics")
    local n = ok and m.values["vllm:request_success_total"] or nil
    rows[i] = { replica = i, port = server.port, devices = table.concat(server.devices or {}, ","), requests = n,
      error = not ok and tostring(m):match("[^\n]*") or nil }
    total = total + (n or 0)
  end
  for _, r in ipairs(rows) do r.share = (r.requests and total > 0) and r.requests / total or nil end
  return rows
end

-- Stops the balancer and every replica (each server:stop(): its process, its container).
function Group:stop()
  if self.stopped then return end
  self.stopped = true
  for _, sampler in ipairs(self.samplers or {}) do pcall(sampler.stop, sampler) end
  self.samplers = nil
  if self.balancer and self.balancer.process then
    pcall(function()
      self.balancer.process:kill("TERM")
      self.balancer.process:wait()
    end)
  end
  pcall(function()
    self.session:exec("docker rm -f " .. LB_NAME .. " >/dev/null 2>&1; true", { quiet = true, check = false })
  end)
  for _, server in ipairs(self.servers) do pcall(server.stop, server) end
  if self.dir then pcall(machine.remove_workdir, self.session, self.dir) end
end

-- Copies each replica's log into the output folder (logs/vllm-PORT.log).
function Group:download_logs(folder)
  for _, server in ipairs(self.servers) do
    pcall(server.download_log, server, (folder or "logs") .. "/vllm-" .. server.port .. ".log")
  end
end

return M
