-- runara.scenario: what every scenario script shares — its declared params (checked before
-- anything is created, printed by `runara SCRIPT --help`), one way to get its machine (a droplet
-- of this run, a machine of yours named with --on USER@HOST, or a running server named with
-- --on URL), and a report written on every ending, Ctrl-C included. See docs/scenarios.md.
--
--   local scenario = require("runara.scenario")
--   scenario.run({
--     title = function(p) return "Llama on " .. p.size end,
--     about = "what it measures, what it costs",
--     params = {
--       { name = "size", default = "gpu-mi300x1-192gb", help = "droplet size" },
--       { name = "max_model_len", type = "integer", default = 8192, help = "vLLM --max-model-len" },
--     },
--   }, function(sc)
--     local m = sc:machine{ name = "llama", size = sc.params.size, image = "gpu-amd-base", region = "atl1" }
--     local server = sc:serve(m, { model = "meta-llama/Llama-3.3-70B-Instruct" })
--     suite.run(server, { report = sc.report, gpu = m and m.gpu })
--   end)
local report = require("runara.report")
local machine_info = require("runara.machine")
local manifest = require("runara.manifest")
local errors = require("runara.errors")
local report_checks = require("runara.report_checks")

local M = {}

local TYPES = { string = true, number = true, integer = true, boolean = true, integers = true }
-- Where a param may apply (its `applies` list): a droplet of the run, a machine of yours (--on
-- USER@HOST), a running server (--on URL). A param that does not apply where the run runs (a
-- droplet size under --on URL) is left out of the report's and the manifest's params.
local WHERE = { droplet = true, machine = true, endpoint = true }

-- Why params did not apply, in words for the manifest.
local function not_applied_why(where)
  if where == "endpoint" then
    return "--on " .. runara.on.endpoint .. " names a running server: runara made no droplet and started no server"
  end
  return "--on names a machine of yours: runara made no droplet"
end

local function suggestion(name, candidates)
  local best = errors.suggest(name, candidates)
  return best and (" (did you mean '" .. best .. "'?)") or ""
end

-- What is wrong with a declaration itself (the script author's mistakes): a message, or nil.
-- scenario.run raises it with level 2, at the author's line.
local function declaration_problem(decl)
  if type(decl) ~= "table" then return "scenario.run: argument 'declaration' must be a table" end
  local params = decl.params or {}
  if type(params) ~= "table" then return "scenario.run: option 'params' must be a list of { name =, default =, help = }" end
  local seen = {}
  for i, p in ipairs(params) do
    if type(p) ~= "table" or type(p.name) ~= "string" or not p.name:match("^[%a_][%w_]*$") then
      return string.format("scenario.run: params[%d] must be a table with a name made of letters, digits and _", i)
    end
    if seen[p.name] then return "scenario.run: param '" .. p.name .. "' is declared twice" end
    seen[p.name] = true
    if p.type ~= nil and not TYPES[p.type] then
      return string.format("scenario.run: param '%s': type must be string, number, integer, integers or boolean, got %s", p.name, tostring(p.type))
    end
    if p.choices ~= nil and type(p.choices) ~= "table" then
      return "scenario.run: param '" .. p.name .. "': choices must be a list of strings"
    end
    if p.applies ~= nil then
      local ok = type(p.applies) == "table" and #p.applies > 0
      for _, w in ipairs(ok and p.applies or {}) do ok = ok and WHERE[w] == true end
      if not ok then
        return "scenario.run: param '" .. p.name .. "': applies must be a list of \"droplet\", \"machine\", \"endpoint\""
      end
    end
  end
  if decl.on ~= nil then
    if type(decl.on) ~= "table" then return "scenario.run: option 'on' must be a list of \"machine\" and \"endpoint\"" end
    for _, form in ipairs(decl.on) do
      if form ~= "machine" and form ~= "endpoint" then
        return "scenario.run: option 'on': each form must be \"machine\" (--on USER@HOST) or \"endpoint\" (--on URL), got " .. tostring(form)
      end
    end
  end
end

-- The --on forms a declaration accepts: its `on` list, else both but a URL alone when it
-- needs_machine. A set: { machine = true, endpoint = true }.
local function on_forms(decl)
  local forms = {}
  for _, form in ipairs(decl.on or (decl.needs_machine and { "machine" } or { "machine", "endpoint" })) do forms[form] = true end
  return forms
end

-- What --help says of where the scenario runs: only the --on forms it accepts.
local function where_help(decl)
  local forms, clauses = on_forms(decl), {}
  if forms.machine then clauses[#clauses + 1] = "--on USER@HOST runs it on a machine of yours (nothing of the run is left there)" end
  if forms.endpoint then clauses[#clauses + 1] = "--on http(s)://HOST:PORT against a running server" end
  if #clauses == 0 then
    return "Where it runs: droplets it creates itself; it takes no --on" .. (decl.on_refused and (" (" .. decl.on_refused .. ")") or "") .. "."
  end
  return "Where it runs: a droplet of this run by default; " .. table.concat(clauses, ", ") .. "."
end

local function describe_default(p)
  local d = p.default
  if type(d) == "function" then return p.default_help or "depends" end
  if d == nil then return "none" end
  if type(d) == "table" then return table.concat(d, ",") end
  return tostring(d)
end

-- One value from the command line (a string) to the declared type, or nil and why not.
local function convert(p, text)
  local kind = p.type or "string"
  if kind == "string" then
    if p.choices then
      for _, c in ipairs(p.choices) do if c == text then return text end end
      return nil, "must be one of " .. table.concat(p.choices, ", ")
    end
    return text
  elseif kind == "boolean" then
    if text == "true" or text == "yes" or text == "1" then return true end
    if text == "false" or text == "no" or text == "0" then return false end
    return nil, "must be true or false"
  end
  if kind == "integers" then  -- "64,128,256"
    local list = {}
    for item in (text .. ","):gmatch("([^,]*),") do
      local n = tonumber(item)
      if not n or n % 1 ~= 0 or n < (p.min or -math.huge) then
        return nil, "must be a comma-separated list of whole numbers" .. (p.min and " >= " .. p.min or "") .. ", e.g. 64,128"
      end
      list[#list + 1] = n
    end
    return list
  end
  local n = tonumber(text)
  if not n or n ~= n or n == math.huge or n == -math.huge then return nil, "must be a number" end
  if kind == "integer" and n % 1 ~= 0 then return nil, "must be a whole number" end
  if p.min and n < p.min then return nil, "must be at least " .. p.min end
  if p.max and n > p.max then return nil, "must be at most " .. p.max end
  return n
end

-- The params the command line gave, checked against the declaration. `args` is runara.args.
-- Raises a usage error (runara.usage_error: the mistake is on the command line, not in a script
-- line; the run exits 2 without a traceback) on an unknown param, a value of the wrong type, or
-- a stray argument.
function M.parse_params(declared, args)
  local by_name, names = {}, {}
  for _, p in ipairs(declared) do by_name[p.name] = p; names[#names + 1] = p.name end
  local values = {}
  for _, a in ipairs(args) do
    local key, value = a:match("^([^=]*)=(.*)$")
    if a == "--help" or a == "-h" then
      -- handled by the caller
    elseif not key or key == "" then
      runara.usage_error(string.format("argument '%s': a scenario takes params as KEY=VALUE (%s); runara's own options go before the script", a,
        #names > 0 and table.concat(names, ", ") or "this one declares none"))
    elseif not by_name[key] then
      runara.usage_error(string.format("unknown param '%s'%s; this scenario's params: %s (runara SCRIPT --help)", key,
        suggestion(key, names), #names > 0 and table.concat(names, ", ") or "none"))
    else
      local v, why = convert(by_name[key], value)
      if v == nil then runara.usage_error(string.format("param %s=%s: %s", key, value, why)) end
      values[key] = v
    end
  end
  -- Plain defaults first, then the computed ones, which see every other value (an image that
  -- follows the size, given or defaulted).
  local computed = {}
  for _, p in ipairs(declared) do
    if values[p.name] == nil then
      if type(p.default) == "function" then computed[#computed + 1] = p else values[p.name] = p.default end
    end
  end
  for _, p in ipairs(computed) do values[p.name] = p.default(values) end
  return values
end

-- The help text `runara SCRIPT --help` prints.
function M.help(decl, script)
  local lines = { "usage: runara [OPTIONS] " .. (script or "SCRIPT") .. " [KEY=VALUE ...]" }
  if decl.about then lines[#lines + 1] = "\n" .. decl.about end
  lines[#lines + 1] = "\nParams:"
  local width = 0
  for _, p in ipairs(decl.params or {}) do width = math.max(width, #p.name) end
  for _, p in ipairs(decl.params or {}) do
    local kind = p.choices and table.concat(p.choices, "|") or (p.type or "string")
    lines[#lines + 1] = string.format("  %-" .. width .. "s  %s (%s, default %s)", p.name, p.help or "", kind, describe_default(p))
  end
  if #(decl.params or {}) == 0 then lines[#lines + 1] = "  none" end
  lines[#lines + 1] = "\n" .. where_help(decl)
  lines[#lines + 1] = "Rehearse it for free: runara --sim " .. (script or "SCRIPT") .. "; see what it creates: runara plan " .. (script or "SCRIPT")
  return table.concat(lines, "\n")
end

local Scenario = {}
Scenario.__index = Scenario

-- Where this run's machine comes from: "droplet", "machine" (--on USER@HOST) or "endpoint".
function M.where()
  local on = runara.on or {}
  if on.machine then return "machine" end
  if on.endpoint then return "endpoint" end
  return "droplet"
end

-- A machine for the scenario: a droplet of this run (spec: name, size, image, region, and any
-- other droplet.create option), or the machine --on names (spec's size and image then only
-- describe what was asked). Logs in, describes the GPU, starts a GPU sampler (spec.gpu ~= false;
-- interval spec.gpu_interval, default 1 s). Returns nil in endpoint mode (--on URL alone).
-- The table: session, droplet (nil on your machine), kind, where (words for the report), info,
-- gpu (the sampler, or nil), label.
function Scenario:machine(spec)
  if type(spec) ~= "table" then error("sc:machine: argument must be a table { name =, size =, image =, region = }", 2) end
  local rep = spec.report or self.report  -- a machine's view of the report (rep:machine) in a comparison
  if type(rep) ~= "table" or type(rep.bill) ~= "function" or type(rep.metadata) ~= "function" then
    error("sc:machine: option 'report' must be the scenario's report or a machine's view of it (rep:machine), got " ..
          errors.show(spec.report), 2)
  end
  for _, k in ipairs({ "gpu_interval", "timeout" }) do
    if spec[k] ~= nil and not (type(spec[k]) == "number" and spec[k] > 0) then
      error(string.format("sc:machine: option '%s' must be a number of seconds above 0, got %s", k, errors.show(spec[k])), 2)
    end
  end
  local on = runara.on or {}
  local m = { label = spec.label or spec.name }
  if on.machine then
    if self.machine_taken then
      error("sc:machine: --on names one machine, and this scenario asks for a second (" .. tostring(spec.name) ..
            "); run it on droplets (without --on)", 2)
    end
    self.machine_taken = true
    local mm = on.machine
    m.kind, m.where = "machine", string.format("your machine %s@%s:%d (not created by this run; left running)", mm.user, mm.host, mm.port)
    m.session = ssh.connect(mm.host .. ":" .. mm.port, { user = mm.user, name = spec.name, timeout = spec.timeout or 60 })
  elseif on.endpoint then
    return nil  -- a scenario that needs_machine was refused before it started
  else
    local create = {}
    for k, v in pairs(spec) do
      if k ~= "label" and k ~= "gpu" and k ~= "gpu_interval" and k ~= "timeout" and k ~= "report" then create[k] = v end
    end
    local d = droplet.create(create)
    rep:bill(d)
    m.kind, m.droplet = "droplet", d
    m.where = string.format("droplet %s (%s, %s, $%.2f/h; destroyed at the end)", d.name, d.size, d.region, d.price_hourly or 0)
    m.session = ssh.connect(d, { wait_cloud_init = true })
  end
  m.info = machine_info.describe(m.session)
  local facts = manifest.machine(m, spec)
  self.manifest.machines[#self.manifest.machines + 1] = facts
  if #self.machines == 0 or spec.report then
    local i = m.info
    rep:metadata{ gpu = i.gpu, gpu_count = i.gpu_count, gpu_vram_gib = i.gpu_vram_gib, gpu_vram_gb = i.gpu_vram_gb,
      driver_version = i.driver_version, kernel = i.kernel,
      rocm_version = i.rocm_version, cuda_version = i.cuda_version, os = i.os, machine = m.droplet and m.droplet.name or m.session.name,
      region = m.droplet and m.droplet.region, hourly_usd = m.droplet and m.droplet.price_hourly }
  end
  if spec.gpu ~= false and m.info.gpu_backend then
    m.gpu = gpu_metrics.start(m.session, { interval = spec.gpu_interval or 1 })
    if not rep.gpu_sampler then rep.gpu_sampler = m.gpu end
  end
  self.machines[#self.machines + 1] = m
  return m
end

-- A working folder of this run on machine `m` (what sc:machine returned, or a node of sc:cluster):
-- runara.machine.workdir's new, private folder under ~/.cache/runara/runs/, the same on a droplet,
-- under --sim and on a machine of yours. The scenario removes it by that exact path when its body
-- ends, however it ends but a signal (then no remote command can run: it stays in runara's folder).
function Scenario:workdir(m, name)
  if type(m) ~= "table" or m.session == nil then
    error("sc:workdir: argument 'machine' must be what sc:machine returned (or a node of sc:cluster), got " .. errors.show(m), 2)
  end
  local path, why = machine_info.try_workdir(m.session, name)
  if not path then error("sc:workdir: " .. why, 2) end
  self.workdirs[#self.workdirs + 1] = { session = m.session, path = path }
  return path
end

-- Checks that a URL answers as an OpenAI-compatible server; returns the model ids it serves.
-- A URL that does not is the command line's mistake (runara.usage_error: exit 2, no report).
local function served_models(url)
  local how = "; --on takes the base URL of a running OpenAI-compatible server (vLLM, SGLang, TGI), e.g. --on http://HOST:8000"
  -- OpenAI clients are often given the base with /v1; http_load takes either.
  local ok, r = pcall(metrics.get, url:gsub("/v1$", "") .. "/v1/models", { timeout = 10 })
  if not ok then runara.usage_error("--on " .. url .. ": the server cannot be reached: " .. tostring(r):match("[^\n]*") .. how) end
  if r.status ~= 200 then
    runara.usage_error(string.format("--on %s is not an OpenAI-compatible server: GET /v1/models answered HTTP %d", url, r.status) .. how)
  end
  local ids, why = require("runara.served_models").in_body(r.body)
  if not ids then
    runara.usage_error("--on " .. url .. " is not an OpenAI-compatible server: GET /v1/models answered " .. why .. how)
  end
  if #ids == 0 then runara.usage_error("--on " .. url .. " is not an OpenAI-compatible server: GET /v1/models lists no model" .. how) end
  return ids
end

-- The server to measure: vLLM started on `m` (runara.vllm options), or the running server --on
-- URL names (its model: opts.model when it serves that, else the first it lists).
function Scenario:serve(m, opts)
  local vllm = require("runara.vllm")
  local bad = vllm.check_options(opts)
  if bad then error(bad, 2) end  -- at the scenario's own line, before anything starts
  local on = runara.on or {}
  if not on.endpoint and (type(m) ~= "table" or m.session == nil) then
    error("sc:serve: argument 'machine' must be what sc:machine returned, got " .. errors.show(m), 2)
  end
  if on.endpoint then
    local ids = served_models(on.endpoint)
    local model = ids[1]
    for _, id in ipairs(ids) do if id == opts.model then model = id end end
    if opts.model and model ~= opts.model then
      runara.log(string.format("note: %s serves %s, not %s; measuring %s", on.endpoint, table.concat(ids, ", "), opts.model, model))
    end
    -- The load goes from here straight to the server (no tunnel): the report says so.
    -- The machine line says what runara knows of it: a server at that URL, nothing of its machine.
    self.report:metadata{ framework = "a running server at " .. on.endpoint .. " (runara did not make or inspect its machine)",
                          model = model, load_route = "direct" }
    -- The report names what ran: the title and the params' model are the server's, not the script's default.
    if self.recorded_params.model ~= nil and self.recorded_params.model ~= model then
      local na = self.manifest.params_not_applied or { names = {}, why = not_applied_why("endpoint") }
      na.asked_model = self.recorded_params.model
      self.manifest.params_not_applied = na
      self.recorded_params.model = model
    end
    if type(self.decl.title) == "function" then
      local p = {}
      for k, v in pairs(self.params) do p[k] = v end
      p.model = model
      local ok, title = pcall(self.decl.title, p, M.target_words(p.size))
      if ok and type(title) == "string" then self.report.title = title end
    end
    -- A comparison column is for the model it names: none when the server serves another.
    if type(self.decl.reference) == "function" then
      local p = {}
      for k, v in pairs(self.params) do p[k] = v end
      p.model = model
      local ok, key = pcall(self.decl.reference, p)
      if ok then self.report.reference = key and require("runara.reference_numbers")[key] or nil end
    end
    self.manifest.serving[#self.manifest.serving + 1] = manifest.endpoint(on.endpoint, model)
    return { url = on.endpoint, model = model, version = "unknown", endpoint = true }
  end
  -- The server's log in a working folder of the run's (vllm.start's default, ~/vllm.log, may be a
  -- file of the machine's user), removed with the scenario's other folders.
  -- The GPU tool is read first, as vllm.start would: a machine without one is refused before
  -- anything is made on it.
  if opts.log == nil then
    local o = {}
    for k, v in pairs(opts) do o[k] = v end
    if o.gpu == nil then
      local gpu, message = require("runara.container").detect(m.session)
      if not gpu then error("vllm.start: " .. message, 2) end
      o.gpu = gpu
    end
    local dir, why = machine_info.try_workdir(m.session, "vllm")
    if not dir then error("sc:serve: " .. why, 2) end
    self.workdirs[#self.workdirs + 1] = { session = m.session, path = dir }
    o.log, opts = dir .. "/vllm.log", o
  end
  -- vllm.start's own errors (no GPU tool, a server that never answered) at the scenario's line too.
  local server, failed = vllm.try_start(m.session, opts)
  if not server then error(failed, 2) end
  self.servers[#self.servers + 1] = server
  -- The serving stack for the manifest: one remote command (image digest, model revision).
  self.manifest.serving[#self.manifest.serving + 1] = manifest.serving(m.session, server, m.label)
  return server
end

-- N vLLM replicas on the machine behind an nginx balancer (runara.replicas; its options are
-- checked first, errors at the scenario's line). The group stops with the scenario's servers on
-- an error; its serving stack goes into the manifest once (replica 1's command: the others
-- differ only in port and GPUs).
function Scenario:serve_replicas(m, opts)
  local replicas = require("runara.replicas")
  local bad = replicas.check_options(opts)
  if bad then error(bad, 2) end
  if (runara.on or {}).endpoint then
    error("sc:serve_replicas: --on " .. runara.on.endpoint .. " names a running server; replicas need a machine " ..
          "(leave --on out, or --on USER@HOST)", 2)
  end
  if type(m) ~= "table" or m.session == nil then
    error("sc:serve_replicas: argument 'machine' must be what sc:machine returned, got " .. errors.show(m), 2)
  end
  local group, failed = replicas.try_start(m.session, opts)
  if not group then error(failed, 2) end
  self.servers[#self.servers + 1] = group
  self.manifest.serving[#self.manifest.serving + 1] = manifest.serving(m.session, group.servers[1],
    string.format("%s, replica 1 of %d", tostring(m.label), #group.servers))
  return group
end

-- Several droplets of this run as one cluster (runara.cluster: a VPC, the run's firewall, the
-- machines logged into in parallel); its options are checked first, errors at the scenario's line.
-- Each node is billed and described like sc:machine's, gets a GPU sampler (node.gpu; spec.gpu ~=
-- false) and a row in the manifest; node 1's sampler is the report's. The cluster stops with the
-- scenario's servers; the machines, firewall and VPC go at the run's teardown.
function Scenario:cluster(spec)
  local cluster = require("runara.cluster")
  if M.where() ~= "droplet" then
    error("sc:cluster: a cluster is made of droplets of this run, and --on names " .. (runara.on.endpoint or "a machine of yours") ..
          "; leave --on out", 2)
  end
  if type(spec) ~= "table" then error("sc:cluster: argument must be a table { nodes =, size =, image =, region = }", 2) end
  local create = {}
  for k, v in pairs(spec) do if k ~= "gpu" and k ~= "gpu_interval" then create[k] = v end end
  local bad = cluster.check_options(create)
  if bad then error(bad, 2) end
  local c, failed = cluster.try_create(create)
  if not c then error(failed, 2) end
  local rep = self.report
  self.servers[#self.servers + 1] = c
  for _, node in ipairs(c.nodes) do
    local d = node.droplet
    rep:bill(d)
    node.kind, node.label = "droplet", string.format("node %d", node.rank)
    node.where = string.format("droplet %s (%s, %s, $%.2f/h, private %s; destroyed at the end)", d.name, d.size, d.region,
      d.price_hourly or 0, tostring(node.private_ip))
    node.info = machine_info.describe(node.session)
    self.manifest.machines[#self.manifest.machines + 1] = manifest.machine(node, spec)
    if spec.gpu ~= false and node.info.gpu_backend then
      node.gpu = gpu_metrics.start(node.session, { interval = spec.gpu_interval or 1 })
    end
    self.machines[#self.machines + 1] = node
  end
  local i, head = c.head.info, c.head
  rep:metadata{ gpu = i.gpu, gpu_count = i.gpu_count, gpu_vram_gib = i.gpu_vram_gib, gpu_vram_gb = i.gpu_vram_gb,
    driver_version = i.driver_version, kernel = i.kernel, rocm_version = i.rocm_version, cuda_version = i.cuda_version,
    os = i.os, machine = head.droplet.name, region = head.droplet.region, hourly_usd = head.droplet.price_hourly }
  if head.gpu and not rep.gpu_sampler then rep.gpu_sampler = head.gpu end
  return c
end

-- Where the run runs, in a few words for a title: the size of the droplet it will create, or
-- what --on named.
function M.target_words(size)
  local on = runara.on or {}
  if on.machine then return on.machine.user .. "@" .. on.machine.host end
  if on.endpoint then return on.endpoint end
  return size or "a droplet"
end

function M.script_name()
  local path = arg and arg[0] or ""
  return path ~= "" and path or "this scenario"
end

-- The params that applied where the run ran (a declared `applies` list names where a param does;
-- none: everywhere), as recorded in the report and the manifest, and the names of those that did
-- not (sorted; nil when every param applied).
function M.applied_params(declared, values, where)
  local shown, left = {}, {}
  for _, p in ipairs(declared or {}) do
    local applies = p.applies == nil
    for _, w in ipairs(p.applies or {}) do applies = applies or w == where end
    if applies then shown[p.name] = values[p.name] elseif values[p.name] ~= nil then left[#left + 1] = p.name end
  end
  table.sort(left)
  return shown, #left > 0 and left or nil
end

-- What the report says about where the run ran.
local function where_words(sc)
  local on = runara.on or {}
  local parts = {}
  for _, m in ipairs(sc.machines) do parts[#parts + 1] = m.where end
  if on.endpoint then parts[#parts + 1] = "the running server " .. on.endpoint .. " (load sent from this computer)" end
  return #parts > 0 and table.concat(parts, "; ") or nil
end

-- Whether the scenario has made or measured nothing yet: no machine, server, bill or load.
local function nothing_made(sc)
  local rep = sc.report
  return #sc.machines == 0 and #sc.servers == 0 and #rep.billed == 0 and next(rep.loads or {}) == nil
end

-- Everything the report needs that can be read without waiting: every ending calls this.
local function finish_report(sc, reason)
  local rep = sc.report
  rep:metadata{ ran_on = where_words(sc) }
  rep:collect_samples()  -- the GPU samples taken so far; sampler:results() does not wait
  if reason then rep:fail(reason) end
  sc.written = true
  return rep:write()
end

-- Declares the scenario, checks its params, and runs `body(sc)` with sc.params, sc.report,
-- sc:machine, sc:serve. The report (results.json, report.md, report.html) is written at
-- every ending: success, an error, the watchdog, Ctrl-C/SIGTERM/SIGHUP (PARTIAL, with what was
-- measured so far). `decl.summary(sc, paths)` may print the closing lines (default: the
-- report's summary). Under `runara SCRIPT --help` it prints the help and runs nothing.
function M.run(decl, body)
  local bad = declaration_problem(decl)
  if bad then error(bad, 2) end
  if type(body) ~= "function" then error("scenario.run: argument 'body' must be a function(sc)", 2) end
  if runara.help then
    print(M.help(decl, arg and arg[0]))
    return nil
  end
  local params = M.parse_params(decl.params or {}, runara.args)
  local forms, where = on_forms(decl), M.where()
  if where ~= "droplet" and not forms[where] then
    if where == "endpoint" and forms.machine then
      runara.usage_error(M.script_name() .. " needs a machine to run on: --on " .. runara.on.endpoint .. " names only a server; add --on USER@HOST, " ..
            "or leave --on out to rent a droplet")
    end
    local named = where == "endpoint" and runara.on.endpoint or "a machine of yours"
    runara.usage_error(M.script_name() .. " runs on droplets it creates itself, and --on names " .. named .. "; leave --on out" ..
          (decl.on_refused and (": " .. decl.on_refused) or ""))
  end
  local title = decl.title
  if type(title) == "function" then title = title(params, M.target_words(params.size)) end
  local where = M.where()
  local recorded, not_applied = M.applied_params(decl.params, params, where)
  local report_options = { title = title or M.script_name(), simulated = runara.simulated, reference = decl.reference and decl.reference(params) }
  -- An unknown reference is the declaration's mistake: report.new's error, at the line that called scenario.run.
  bad = report_checks.new(report_options)
  if bad then error(bad, 2) end
  local rep = report.new(report_options)
  local sc = setmetatable({ decl = decl, params = params, report = rep, machines = {}, servers = {}, workdirs = {} }, Scenario)
  sc.recorded_params = recorded
  rep:set("params", recorded)
  -- The run manifest (runara.manifest): filled as machines and servers come; the loads' seeds
  -- and prompt sets are added when the report is written.
  sc.manifest = { runara = manifest.runtime(), script = manifest.script(), params = recorded, machines = {}, serving = {} }
  if not_applied then
    sc.manifest.params_not_applied = { names = not_applied, why = not_applied_why(where) }
  end
  if M.where() == "endpoint" then
    sc.manifest.machines[1] = { kind = "endpoint", note = manifest.unknown("--on " .. runara.on.endpoint ..
      " names only a server: the machine under it is not reached") }
  end
  rep:manifest(sc.manifest)
  runara.at_exit(function(ending)
    if sc.written then return end
    finish_report(sc, ending.status == "ok" and "the run ended before its report was written" or ending.reason)
    print("\n" .. rep:summary() .. "\n  PARTIAL report: " .. runara.out_dir() .. "/report.html")
  end)
  local ok, err = pcall(body, sc)
  if not ok then
    -- On a machine the run did not create, its servers go now (teardown kills their processes
    -- too; this also removes their containers). A droplet goes whole at teardown.
    for _, server in ipairs(sc.servers) do
      if server.session and M.where() == "machine" then pcall(server.stop, server) end
    end
  end
  -- Last made, first removed; a machine that is gone (its session raises) keeps the error it had.
  for i = #sc.workdirs, 1, -1 do
    local w = sc.workdirs[i]
    pcall(machine_info.remove_workdir, w.session, w.path)
  end
  sc.workdirs = {}
  -- A mistake of the command line's (an unknown size, no token, no key, a param a script checks)
  -- before the scenario made or measured anything: said alone, without a report (runara leaves
  -- no folder for it).
  if not ok and runara.is_usage_error(err) and nothing_made(sc) then
    sc.written = true  -- nor a PARTIAL one at exit
    error(err, 0)
  end
  local paths = finish_report(sc, not ok and tostring(err) or nil)
  if decl.summary then decl.summary(sc, paths) else print("\n" .. rep:summary(paths)) end
  if not ok then error(err, 0) end
  return sc
end

return M
