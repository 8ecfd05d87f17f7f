-- runara.replicas: seed 004's N vLLM replicas behind nginx. The GPU split per vendor, nginx's
-- configuration, vllm.start's per-replica GPU visibility and container name, and every option
-- error at the caller's line before anything happens on the machine.
local t = require("t")
local replicas = require("runara.replicas")
local vllm = require("runara.vllm")

local HERE = "test_replicas.lua:%d+:"
local MODEL = "meta-llama/Llama-3.1-70B-Instruct"

local function has(text, plain) return text:find(plain, 1, true) ~= nil end

-- A stand-in for an ssh session: records every remote call; spawn gives a process that has
-- already exited (so vllm.start gives up at once), everything else fails.
local WORKDIR = "/root/.cache/runara/runs/" .. runara.run_id .. "-replicas.Ab3dE6gH"

-- A session whose commands are refused, but the group's working folder (runara.machine.workdir's
-- mktemp, and its removal by that path): both are kept in `workdir_commands`.
local function fake_session()
  local s = { name = "fake-droplet", calls = {}, spawned = {}, workdir_commands = {} }
  for _, m in ipairs({ "exec", "upload", "download" }) do
    s[m] = function(self, cmd)
      if m == "exec" and (cmd:find("mktemp -d", 1, true) or cmd:find("rm -rf -- ", 1, true)) then
        self.workdir_commands[#self.workdir_commands + 1] = cmd
        return { code = 0, stdout = cmd:find("mktemp", 1, true) and WORKDIR .. "\n" or "", stderr = "" }
      end
      self.calls[#self.calls + 1] = m
      error("fake session: " .. m .. " called", 0)
    end
  end
  function s:spawn(cmd)
    self.calls[#self.calls + 1] = "spawn"
    self.spawned[#self.spawned + 1] = cmd
    return { running = function() return false end, output = function() return { stdout = "line 1\nthe last line\n" } end,
             kill = function() end, wait = function() return {} end }
  end
  function s:forward(port)
    self.calls[#self.calls + 1] = "forward"
    return "http://127.0.0.1:1"  -- nothing listens there
  end
  return s
end

local function opts(extra)
  local o = { model = MODEL, count = 2, gpus = 8, gpu = "amd" }
  for k, v in pairs(extra or {}) do o[k] = v end
  for k, v in pairs(extra or {}) do if v == false then o[k] = nil end end
  return o
end

local function rejects(o, plain)
  local s = fake_session()
  local err = t.raises(function() replicas.start(s, o) end, plain, HERE)
  t.eq(#s.calls, 0, "remote calls before the error (" .. plain .. ")")
  t.match(err, "replicas.start: ", "prefix")
  return err
end

t.test("plan: each replica its own GPUs and port, tensor_parallel_size = gpus / count", function()
  local p = replicas.plan{ count = 4, gpus = 8, vendor = "nvidia" }
  t.eq(#p, 4)
  for i, r in ipairs(p) do
    t.eq(r.index, i)
    t.eq(r.port, 8000 + i, "ports 8001 … 8000+n (seed 004)")
    t.eq(r.tensor_parallel_size, 2)
    t.eq(table.concat(r.devices, ","), (2 * i - 2) .. "," .. (2 * i - 1))
  end
  t.eq(p[3].visible, "CUDA_VISIBLE_DEVICES=4,5", "NVIDIA: CUDA's variable")
  local a = replicas.plan{ count = 8, gpus = 8, vendor = "amd" }
  t.eq(a[8].visible, "HIP_VISIBLE_DEVICES=7", "AMD: HIP's variable")
  t.eq(a[8].tensor_parallel_size, 1)
  local one = replicas.plan{ count = 1, gpus = 8, vendor = "amd", first_port = 9001 }
  t.eq(one[1].visible, "HIP_VISIBLE_DEVICES=0,1,2,3,4,5,6,7")
  t.eq(one[1].port, 9001)
end)

t.test("plan: a split that does not fit is refused at the caller's line", function()
  t.raises(function() replicas.plan{ count = 3, gpus = 8, vendor = "amd" } end,
    "replicas.plan: 3 replicas do not divide the machine's 8 GPUs evenly (each replica gets the same tensor_parallel_size): choose count 1, 2, 4, 8", HERE)
  t.raises(function() replicas.plan{ count = 16, gpus = 8, vendor = "amd" } end,
    "replicas.plan: 16 replicas need at least 16 GPUs (one each), and the machine has 8: choose count <= 8", HERE)
  t.raises(function() replicas.plan{ count = 2, gpus = 8, vendor = "intel" } end,
    "replicas.plan: option 'vendor' must be \"amd\" or \"nvidia\", got \"intel\"", HERE)
  t.raises(function() replicas.plan("4") end, "replicas.plan: argument must be a table", HERE)
end)

t.test("nginx_config: round-robin upstream of every replica, unprivileged paths, streaming unbuffered", function()
  local c = replicas.nginx_config{ ports = { 8001, 8002, 8003 }, port = 9080 }
  t.truthy(has(c, "upstream vllm_replicas {\n    server 127.0.0.1:8001 max_fails=0;\n    server 127.0.0.1:8002 max_fails=0;\n" ..
    "    server 127.0.0.1:8003 max_fails=0;\n    keepalive 512;\n  }"), "one server line per replica, in order")
  t.no_match(c, "least_conn", "round-robin: nginx's default method, no other named")
  t.no_match(c, "ip_hash")
  t.truthy(has(c, "listen 127.0.0.1:9080;"), "the balancer on loopback, reached through a tunnel")
  t.truthy(has(c, "proxy_pass http://vllm_replicas;"))
  t.truthy(has(c, "proxy_buffering off;"), "SSE not buffered")
  t.truthy(has(c, "proxy_http_version 1.1;"))
  t.no_match(c, "\nuser ", "no user directive: it runs unprivileged in the simulator")
  for _, path in ipairs({ "error_log error.log", "pid nginx.pid", "client_body_temp_path tmp/", "proxy_temp_path tmp/",
                          "fastcgi_temp_path tmp/", "uwsgi_temp_path tmp/", "scgi_temp_path tmp/" }) do
    t.truthy(has(c, path), path .. " relative to nginx's prefix")
  end
  t.no_match(c, "/var/", "no path outside the prefix")
  t.raises(function() replicas.nginx_config{ ports = {} } end, "option 'ports' must be a non-empty list", HERE)
  t.raises(function() replicas.nginx_config{ ports = { 8001, 9080 } } end, "the balancer's port 9080 is also a replica's", HERE)
  t.raises(function() replicas.nginx_config{ ports = { 8001, 70000 } } end, "item 2 is 70000, not a port", HERE)
end)

t.test("start: option errors at the caller's line, before anything on the machine", function()
  rejects(nil, "replicas.start: options must be a table, got nil")
  rejects(opts{ count = 3 }, "3 replicas do not divide the machine's 8 GPUs evenly")
  rejects(opts{ count = 16 }, "16 replicas need at least 16 GPUs (one each), and the machine has 8")
  rejects(opts{ count = 0 }, "option 'count' must be a whole number of replicas >= 1, got 0")
  rejects(opts{ gpus = false }, "option 'gpus' must be the machine's GPU count")
  rejects(opts{ port = 8002 }, "the balancer's port 8002 clashes with replica 2's (replicas use 8001-8002)")
  rejects(opts{ first_port = 65535 }, "2 replicas from port 65535 would need ports up to 65536, beyond 65535")
  rejects(opts{ tensor_parallel_size = 4 }, "option 'tensor_parallel_size' is set per replica by replicas.start (from gpus / count)")
  rejects(opts{ devices = { 0 } }, "option 'devices' is set per replica by replicas.start")
  rejects(opts{ balancer = "haproxy" }, "option 'balancer' must be \"docker\" (the nginx image) or \"host\"")
  rejects(opts{ cuont = 2 }, "unknown option 'cuont' (did you mean 'count'?)")
  rejects(opts{ model = false }, "option 'model' is required")
  rejects(opts{ quantization = 8 }, "option 'quantization' must be a non-empty string, got 8")
  t.eq(replicas.check_options(opts{ count = 3 }):sub(1, 16), "replicas.start: ", "check_options: the same message")
  t.eq(replicas.check_options(opts{}), nil)
end)

t.test("start: a replica that fails is named with its port, GPUs and log tail; nginx never starts", function()
  local s = fake_session()
  local err = t.raises(function() replicas.start(s, opts{ count = 2, ready_timeout = 5 }) end,
    "replicas.start: replica 1 of 2 (port 8001, GPUs 0,1,2,3) failed: the server on fake-droplet exited before it was ready", HERE)
  t.match(err, "the last line", "the replica's log tail")
  t.eq(#s.spawned, 2, "both replicas started (at once), no balancer")
  t.truthy(has(s.spawned[1], "-e HIP_VISIBLE_DEVICES=0,1,2,3 "), "replica 1 sees GPUs 0-3: " .. s.spawned[1])
  t.truthy(has(s.spawned[2], "-e HIP_VISIBLE_DEVICES=4,5,6,7 "), "replica 2 sees GPUs 4-7")
  t.truthy(has(s.spawned[1], "--port 8001 "), "replica 1 on 8001")
  t.truthy(has(s.spawned[2], "--port 8002 "), "replica 2 on 8002")
  t.truthy(has(s.spawned[2], "--tensor-parallel-size '4'"), "tensor_parallel_size 8 / 2")
  t.truthy(has(s.spawned[2], "--name runara-vllm-" .. runara.run_id .. "-8002 "), "a container of its own per replica")
  -- Logs in the group's own working folder (never a ~/vllm-8002.log the machine's user may have),
  -- removed by its exact path once the group stopped.
  t.truthy(has(s.spawned[2], "tee '" .. WORKDIR .. "/vllm-8002.log'"), "a log of its own per replica: " .. s.spawned[2])
  t.eq(#s.workdir_commands, 2)
  t.match(s.workdir_commands[1], "mktemp %-d \"%$HOME\"/%.cache/runara/runs/" .. runara.run_id .. "%-replicas%.XXXXXXXX$")
  t.match(s.workdir_commands[2], "^rm %-rf %-%- '" .. WORKDIR:gsub("%p", "%%%0") .. "'; ")
end)

t.test("vllm.start: devices and container, per vendor and mode", function()
  local function line(o)
    local s = fake_session()
    local full = { model = MODEL, ready_timeout = 5 }
    for k, v in pairs(o) do full[k] = v end
    pcall(vllm.start, s, full)
    return s.spawned[1]
  end
  local nv = line{ gpu = "nvidia", devices = { 2, 3 }, container = "mine-1" }
  t.truthy(has(nv, "--gpus all -e CUDA_VISIBLE_DEVICES=2,3 "), "NVIDIA: CUDA_VISIBLE_DEVICES in the container: " .. nv)
  t.truthy(has(nv, "--name mine-1 "))
  local pip = line{ gpu = "amd", mode = "pip", devices = { 5 } }
  t.truthy(has(pip, "HIP_VISIBLE_DEVICES=5 vllm serve "), "pip: the variable before vllm serve: " .. pip)
  local plain = line{ gpu = "amd" }
  t.no_match(plain, "VISIBLE_DEVICES", "no devices: every GPU, as before")
  t.truthy(has(plain, "--name runara-vllm-" .. runara.run_id .. " "), "the run's own container name by default")
  local function bad(o, plain_text)
    local full = { model = MODEL }
    for k, v in pairs(o) do full[k] = v end
    t.raises(function() vllm.start(fake_session(), full) end, plain_text, HERE)
  end
  bad({ devices = {} }, "vllm.start: option 'devices' must be a non-empty list of GPU indices")
  bad({ devices = { 0, -1 } }, "item 2 is -1")
  bad({ devices = { 1, 1 } }, "option 'devices' names GPU 1 twice")
  bad({ container = "a b" }, "option 'container' must be a container name")
end)

t.done()
