-- runara.replicas_plan: the pure half of runara.replicas — which GPUs and port each replica gets,
-- whether a split fits the machine, and nginx's configuration text. No machine, no clock: each
-- is unit-tested (tests/lua/test_replicas.lua). runara.replicas re-exports plan and nginx_config.
local errors = require("runara.errors")
local vllm = require("runara.vllm")
local show = errors.show

local M = {}

M.defaults = { first_port = 8001, port = 9080, balancer = "docker", balancer_image = "nginx:1.27" }

local function whole(v, low) return type(v) == "number" and v % 1 == 0 and v >= (low or 1) end

-- What is wrong with the GPU split (a message), or nil.
function M.split_problem(count, gpus)
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
function M.port_problem(count, first, port)
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
function M.raw_plan(spec)
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
  local bad = M.split_problem(spec.count, spec.gpus)
    or (not vllm.VISIBLE_DEVICES[spec.vendor] and "option 'vendor' must be \"amd\" or \"nvidia\", got " .. show(spec.vendor))
    or M.port_problem(spec.count, spec.first_port or M.defaults.first_port, spec.port or M.defaults.port)
  if bad then error("replicas.plan: " .. bad, 2) end
  return M.raw_plan(spec)
end

-- nginx's whole configuration: an upstream of the replicas' ports, round-robin (nginx's default),
-- on 127.0.0.1:`port`. Every path in it is relative to nginx's prefix (-p), so the same text runs
-- as root in the nginx container and as an unprivileged user (no `user` directive; pid, logs and
-- temp files in the prefix folder, whose tmp/ must exist).
function M.raw_nginx_config(ports, port)
  local lines = {
    "# runara: load balancer (as in Dell and Metrum AI's MI300X study), round-robin over " .. #ports .. " vLLM replica(s)",
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
  return M.raw_nginx_config(ports, port)
end

return M
