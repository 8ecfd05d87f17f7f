-- runara.replicas: seed 004's serving architecture on one machine — N vLLM replicas, each on
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
-- (replicas.plan, replicas.nginx_config), unit-tested in tests/lua/test_replicas.lua. The
-- balancer is the official nginx image (a GPU droplet's image has docker, not nginx), or the
-- machine's own nginx with balancer = "host". See docs/stdlib.md#runarareplicas.
local errors = require("runara.errors")
local vllm = require("runara.vllm")
local show = errors.show

local M = {}

M.defaults = { first_port = 8001, port = 9080, balancer = "docker", balancer_image = "nginx:1.27" }

-- The run's own names: a run never stops a container or removes a folder it did not make.
local LB_NAME = "runara-lb-" .. runara.run_id
local LB_DIR = "runara-lb-" .. runara.run_id  -- under the remote user's home
local LB_MOUNT = "/runara-lb"                  -- where the container sees it

-- vllm.start's options that replicas.start sets itself, per replica (its own `port` is the balancer's).
local SET_HERE = { devices = "gpus and count", tensor_parallel_size = "gpus / count",
  container = "the run id", log = "the replica's port" }
local OWN = { count = true, gpus = true, first_port = true, port = true, balancer = true, balancer_image = true,
  balancer_timeout = true }

local function quote(text) return "'" .. tostring(text):gsub("'", "'\\''") .. "'" end

local function whole(v, low) return type(v) == "number" and v % 1 == 0 and v >= (low or 1) end

-- What is wrong with the GPU split (a message), or nil.
local function split_problem(count, gpus)
  if not whole(count) then return "option 'count' must be a whole number of replicas >= 1, got " .. show(count) end
  if not whole(gpus) then return "option 'gpus' must be the machine's GPU count (a whole number >= 1), got " .. show(gpus) end
  if count > gpus then
    return string.format("%d replicas need at least %d GPUs (one each), and the machine has %d: choose count <= %d",
      count, count, gpus, gpus)
  end
  if gpus % count ~= 0 then
    local fits = {}
    for n = 1, gpus do if gpus % n == 0 then fits[#fits + 1] = tostring(n) end end
    return string.format("%d replicas do not divide the machine's %d GPUs evenly (each replica gets the same " ..
      "tensor_parallel_size): choose count %s", count, gpus, table.concat(fits, ", "))
  end
end

-- What is wrong with the ports (a message), or nil.
local function port_problem(count, first, port)
  if not (whole(first) and first <= 65535) then return "option 'first_port' must be a port from 1 to 65535, got " .. show(first) end
  if not (whole(port) and port <= 65535) then return "option 'port' (the balancer's) must be a port from 1 to 65535, got " .. show(port) end
  local last = first + count - 1
  if last > 65535 then
    return string.format("%d replicas from port %d would need ports up to %d, beyond 65535: lower first_port", count, first, last)
  end
  if port >= first and port <= last then
    return string.format("the balancer's port %d clashes with replica %d's (replicas use %d-%d): choose another port or first_port",
      port, port - first + 1, first, last)
  end
end

-- Which GPUs and port each replica gets: a list of { index, port, devices, tensor_parallel_size,
-- visible } (visible: the vendor's variable, "CUDA_VISIBLE_DEVICES=0,1" or "HIP_VISIBLE_DEVICES=0,1").
-- spec: count, gpus, vendor ("amd" or "nvidia"), first_port (default 8001). Raises on a bad split.
local function plan(spec)
  local tp = spec.gpus / spec.count
  local list = {}
  for i = 1, spec.count do
    local devices = {}
    for g = (i - 1) * tp, i * tp - 1 do devices[#devices + 1] = g end
    list[i] = { index = i, port = (spec.first_port or M.defaults.first_port) + i - 1, devices = devices,
      tensor_parallel_size = tp, visible = vllm.VISIBLE_DEVICES[spec.vendor] .. "=" .. table.concat(devices, ",") }
  end
  return list
end

function M.plan(spec)
  if type(spec) ~= "table" then error("replicas.plan: argument must be a table { count =, gpus =, vendor = }, got " .. show(spec), 2) end
  local bad = split_problem(spec.count, spec.gpus)
    or (not vllm.VISIBLE_DEVICES[spec.vendor] and "option 'vendor' must be \"amd\" or \"nvidia\", got " .. show(spec.vendor))
    or port_problem(spec.count, spec.first_port or M.defaults.first_port, spec.port or M.defaults.port)
  if bad then error("replicas.plan: " .. bad, 2) end
  return plan(spec)
end

-- nginx's whole configuration: an upstream of the replicas' ports, round-robin (nginx's default),
-- on 127.0.0.1:`port`. Every path in it is relative to nginx's prefix (-p), so the same text runs
-- as root in the nginx container and as an unprivileged user (no `user` directive; pid, logs and
-- temp files in the prefix folder, whose tmp/ must exist).
local function nginx_config(ports, port)
  local lines = {
    "# runara: seed 004's load balancer, round-robin over " .. #ports .. " vLLM replica(s)",
    "worker_processes auto;",
    "error_log error.log warn;",
    "pid nginx.pid;",
    "events { worker_connections 8192; }",
    "http {",
    "  access_log off;",
    "  client_body_temp_path tmp/client_body;",
    "  proxy_temp_path tmp/proxy;",
    "  fastcgi_temp_path tmp/fastcgi;",
    "  uwsgi_temp_path tmp/uwsgi;",
    "  scgi_temp_path tmp/scgi;",
    "  upstream vllm_replicas {",
  }
  -- max_fails=0: a replica that errs stays in the rotation, so its errors are measured instead
  -- of its share silently moving to the others.
  for _, p in ipairs(ports) do lines[#lines + 1] = string.format("    server 127.0.0.1:%d max_fails=0;", p) end
  for _, l in ipairs({
    "    keepalive 512;",
    "  }",
    "  server {",
    string.format("    listen 127.0.0.1:%d;", port),
    "    client_max_body_size 0;",
    "    location / {",
    "      proxy_pass http://vllm_replicas;",
    "      proxy_http_version 1.1;",
    "      proxy_set_header Connection \"\";",
    "      proxy_buffering off;        # server-sent events pass token by token",
    "      proxy_request_buffering off;",
    "      proxy_read_timeout 3600s;",
    "      proxy_send_timeout 3600s;",
    "    }",
    "  }",
    "}",
  }) do lines[#lines + 1] = l end
  return table.concat(lines, "\n") .. "\n"
end

-- The configuration text for replicas on `ports` behind a balancer on `port`.
function M.nginx_config(spec)
  if type(spec) ~= "table" then error("replicas.nginx_config: argument must be a table { ports =, port = }, got " .. show(spec), 2) end
  local ports = spec.ports
  if type(ports) ~= "table" or #ports == 0 then
    error("replicas.nginx_config: option 'ports' must be a non-empty list of the replicas' ports, got " .. show(ports), 2)
  end
  for i, p in ipairs(ports) do
    if not (whole(p) and p <= 65535) then error(string.format("replicas.nginx_config: option 'ports': item %d is %s, not a port", i, show(p)), 2) end
    if p == (spec.port or M.defaults.port) then error(string.format("replicas.nginx_config: the balancer's port %d is also a replica's", p), 2) end
  end
  local port = spec.port or M.defaults.port
  if not (whole(port) and port <= 65535) then error("replicas.nginx_config: option 'port' must be a port from 1 to 65535, got " .. show(port), 2) end
  return nginx_config(ports, port)
end

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
  local bad = split_problem(opts.count, opts.gpus)
    or port_problem(opts.count, opts.first_port or M.defaults.first_port, opts.port or M.defaults.port)
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
local function balancer_command(opts)
  local args = string.format("nginx -p %s/ -c %s/nginx.conf -e %s/error.log -g 'daemon off;'", LB_MOUNT, LB_MOUNT, LB_MOUNT)
  if (opts.balancer or M.defaults.balancer) == "host" then
    return (args:gsub(LB_MOUNT, "\"$HOME/" .. LB_DIR .. "\""))
  end
  return string.format("docker run --rm --name %s --network=host -v \"$HOME/%s:%s\" %s %s", LB_NAME, LB_DIR, LB_MOUNT,
    opts.balancer_image or M.defaults.balancer_image, args)
end

-- The balancer's last lines: what nginx printed, then its error log.
local function balancer_tail(group)
  local out = group.balancer.process:output()
  local text = (out.stdout or "") .. (out.stderr or "")
  local ok, r = pcall(function()
    return group.session:exec("tail -n 20 \"$HOME/" .. LB_DIR .. "/error.log\" 2>/dev/null; true", { quiet = true, check = false })
  end)
  if ok and r.stdout then text = text .. r.stdout end
  local lines = {}
  for line in text:gmatch("[^\n]+") do lines[#lines + 1] = line end
  return table.concat(lines, "\n", math.max(1, #lines - 19))
end

-- Starts nginx and waits until a request through it reaches a replica; nil and why not.
local function start_balancer(group, opts)
  local s = group.session
  s:exec("mkdir -p \"$HOME/" .. LB_DIR .. "/tmp\" && cat > \"$HOME/" .. LB_DIR .. "/nginx.conf\"",
    { stdin = group.config, quiet = true })
  group.balancer = { command = balancer_command(opts), port = group.port }
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
      container = "runara-vllm-" .. runara.run_id .. "-" .. r.port, log = "vllm-" .. r.port .. ".log" }
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
    self.session:exec("docker rm -f " .. LB_NAME .. " >/dev/null 2>&1; rm -rf \"$HOME/" .. LB_DIR .. "\"; true",
      { quiet = true, check = false })
  end)
  for _, server in ipairs(self.servers) do pcall(server.stop, server) end
end

-- Copies each replica's log into the output folder (logs/vllm-PORT.log).
function Group:download_logs(folder)
  for _, server in ipairs(self.servers) do
    pcall(server.download_log, server, (folder or "logs") .. "/vllm-" .. server.port .. ".log")
  end
end

M.quote = quote
return M
