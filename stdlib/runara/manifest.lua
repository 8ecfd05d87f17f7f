-- runara.manifest: what it takes to rerun a run — runara's version, the script and its sha256,
-- the params, each load's seed and prompt set, the machine (size, region, image, GPU, driver,
-- ROCm/CUDA, kernel, OS), the serving stack (container image and its digest, vLLM's version and
-- full command line, the model and the revision downloaded) and the tokenizer. results.json's
-- `manifest` and the reports' Manifest section. See docs/report.md#the-run-manifest.
--
-- Facts are read on the machine with its own commands (under --sim its shims answer), with as
-- few remote commands as possible: runara.machine's one, and one for the serving stack. A fact
-- that cannot be read is "unknown (why)", never a guess.
--
--   local manifest = require("runara.manifest")
--   local fields = { runara = manifest.runtime(), script = manifest.script(), params = params, machines = {}, serving = {} }
--   fields.machines[1] = manifest.machine(m, spec)          -- m from sc:machine (info from runara.machine)
--   fields.serving[1] = manifest.serving(m.session, server)  -- server from runara.vllm
--   rep:manifest(fields)                                     -- the loads' seeds and prompts are added when it is written
local sha256 = require("runara.sha256")

local M = {}

-- What a manifest says for a fact the machine (or the run) cannot tell.
function M.unknown(why) return "unknown (" .. tostring(why) .. ")" end

local function is_unknown(v) return type(v) == "string" and v:match("^unknown %(") ~= nil end
M.is_unknown = is_unknown

local function first_line(text)
  local line = tostring(text or ""):match("^%s*([^\n]-)%s*$")
  if line and line ~= "" then return #line > 200 and (line:sub(1, 197) .. "...") or line end
end

-- A value as canonical text (keys sorted, numbers in full): the same table always hashes the same.
local function canonical(v)
  local t = type(v)
  if t == "number" then return string.format("%.17g", v) end
  if t == "string" then return string.format("%q", v) end
  if t ~= "table" then return tostring(v) end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) ~= type(b) then return type(a) < type(b) end
    return a < b
  end)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = canonical(k) .. "=" .. canonical(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end
M.canonical = canonical

-- runara itself: its version and this run's id.
function M.runtime()
  return { version = runara.version, run_id = runara.run_id, simulated = runara.simulated }
end

-- The script runara runs (arg[0]) and the sha256 of its bytes, read now (it waits: call it
-- from the script's task, not from a runara.at_exit function).
function M.script()
  local path = arg and arg[0] or ""
  if path == "" then return { path = M.unknown("no script file: -e or the REPL"), sha256 = M.unknown("no script file") } end
  -- runara.read_file resolves a relative path from the script's own folder: the file's own name.
  local name = path:match("([^/]+)$") or path
  local ok, text = pcall(runara.read_file, path:sub(1, 1) == "/" and path or name)
  if not ok then return { path = path, sha256 = M.unknown("the script could not be read back: " .. (first_line(text) or "?")) } end
  return { path = path, sha256 = sha256(text), bytes = #text }
end

-- The machine a scenario measured: m is what sc:machine returns (kind, droplet, info, label),
-- spec what it was asked for (size, image, region).
function M.machine(m, spec)
  spec = spec or {}
  local info, d = m.info or {}, m.droplet
  local out = { label = m.label, kind = m.kind }
  if d then
    out.name, out.size, out.region, out.price_usd_per_hour = d.name, d.size, d.region, d.price_hourly
    out.image = spec.image or M.unknown("the droplet's image was not named in its create")
  else
    local why = "a machine of yours (--on): runara did not create it"
    out.name = m.session and m.session.name
    out.size, out.region, out.image, out.price_usd_per_hour = M.unknown(why), M.unknown(why), M.unknown(why), M.unknown(why)
  end
  local gpu_why = info.gpu_error and ("no GPU tool answered: " .. first_line(info.gpu_error)) or "the GPU tool did not name it"
  out.gpu = info.gpu or M.unknown(gpu_why)
  out.gpu_count = info.gpu_count or M.unknown(gpu_why)
  out.gpu_vram_gib = info.gpu_vram_gib or M.unknown(gpu_why)
  out.gpu_backend = info.gpu_backend or M.unknown(gpu_why)
  out.driver_version = info.driver_version or M.unknown(info.gpu_backend and (info.gpu_backend .. " did not report a driver version") or gpu_why)
  if info.gpu_backend == "nvidia-smi" then
    out.cuda_version = info.cuda_version or M.unknown("nvidia-smi's header names no CUDA version")
  elseif info.gpu_backend then
    out.rocm_version = info.rocm_version or M.unknown("amd-smi version names no ROCm version")
  else
    out.rocm_version = info.rocm_version or M.unknown(gpu_why)
    out.cuda_version = info.cuda_version or M.unknown(gpu_why)
  end
  out.kernel = info.kernel or M.unknown("uname -r printed nothing")
  out.arch = info.arch or M.unknown("uname -m printed nothing")
  out.os = info.os or M.unknown("/etc/os-release has no PRETTY_NAME")
  return out
end

-- The serving stack of a server runara.vllm started on the machine behind `session`: its
-- image and the image's digest (docker image inspect), vLLM's version (from its start-up log)
-- and command line, the model and the revision the machine's Hugging Face cache holds. One
-- remote command. Never raises: what cannot be read is unknown (why).
function M.serving(session, server, label)
  local out = { machine = label, mode = server.mode, model = server.model,
                vllm_version = (server.version and server.version ~= "unknown") and server.version or
                  M.unknown("the server's start-up log has no 'vLLM API server version' line"),
                command = server.command or M.unknown("the server was not started by runara.vllm") }
  local org, name = tostring(server.model or ""):match("^([^/]+)/(.+)$")
  local cache = org and string.format("$HOME/.cache/huggingface/hub/models--%s--%s", org, (name:gsub("/", "--"))) or nil
  local quote = function(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
  local parts = {}
  if server.mode == "docker" and server.image then
    parts[#parts + 1] = "docker image inspect --format '{{json .RepoDigests}} {{.Id}}' " .. quote(server.image) .. " 2>&1 | head -c 2000"
  end
  parts[#parts + 1] = "echo; echo '--runara-refs--'"
  if cache then
    parts[#parts + 1] = "cat \"" .. cache .. "/refs/main\" 2>&1 | head -c 200; echo; echo '--runara-snapshots--'; ls \"" .. cache .. "/snapshots\" 2>&1 | head -5"
  end
  local ok, r = pcall(function() return session:exec(table.concat(parts, "; "), { quiet = true, check = false, timeout = 30 }) end)
  local text = ok and tostring(r.stdout or "") or ""
  local why_not = not ok and ("the machine did not answer: " .. (first_line(r) or "?")) or nil
  if server.mode == "docker" then
    out.image = server.image or M.unknown("no image named")
    local inspect = text:match("^(.-)\n%-%-runara%-refs%-%-") or ""
    local digest = inspect:match('"([^"]*@sha256:%x+)"')
    local id = inspect:match("%s(sha256:%x+)")
    out.image_digest = digest or M.unknown(why_not or ("docker image inspect: " .. (first_line(inspect) or "no answer")))
    out.image_id = id or M.unknown(why_not or ("docker image inspect: " .. (first_line(inspect) or "no answer")))
  else
    out.image = "none (vLLM installed on the machine with pip)"
  end
  if not cache then
    out.model_revision = M.unknown("the model id is not ORG/NAME, so no Hugging Face cache entry to read")
  else
    local refs = (text:match("%-%-runara%-refs%-%-\n(.-)\n") or "")
    local snaps = text:match("%-%-runara%-snapshots%-%-\n(.*)$") or ""
    local list = {}
    for s in snaps:gmatch("%x+") do if #s == 40 then list[#list + 1] = s end end
    if refs:match("^%x+$") and #refs == 40 then
      out.model_revision = refs
    elseif #list == 1 then
      out.model_revision = list[1]
    else
      out.model_revision = M.unknown(why_not or ("no revision in the machine's Hugging Face cache: " ..
        (first_line(refs) or ("an empty " .. cache:gsub("^%$HOME/", "~/") .. "/refs/main"))))
    end
  end
  return out
end

-- The serving stack of a server that was already running (--on URL): what it says about
-- itself (vLLM's GET /version), the rest unknown. Never raises.
function M.endpoint(url, model)
  local why = "a running server (--on URL): runara did not start it"
  local out = { mode = "endpoint", url = url, model = model, image = M.unknown(why), image_digest = M.unknown(why),
                command = M.unknown(why), model_revision = M.unknown(why) }
  local ok, r = pcall(metrics.get, tostring(url):gsub("/v1$", "") .. "/version", { timeout = 5 })
  local version = ok and r.status == 200 and tostring(r.body):match('"version"%s*:%s*"([^"]+)"')
  out.vllm_version = version or M.unknown(ok and ("GET /version answered HTTP " .. tostring(r.status)) or "GET /version failed")
  return out
end

-- Per load (its name in the report): the seed, the prompt set (its definition — the prompts
-- option, the seed that makes and picks them, the tokenizer that sizes them — and that
-- definition's sha256) and the tokenizer; from what runara.report kept of each http_load result
-- (entry.inputs).
local function load_inputs(entries)
  local seeds, sets, tokenizers, outputs, any = {}, {}, {}, {}, false
  for _, e in ipairs(entries) do
    local inp = e.inputs
    if type(inp) == "table" then
      any = true
      seeds[e.name] = inp.seed or M.unknown("the load's result names no seed")
      if inp.prompts ~= nil then
        local def = canonical({ prompts = inp.prompts, seed = inp.seed, tokenizer = inp.tokenizer_id })
        -- A prompt given as text is in the definition whole; only a short definition is kept beside its hash.
        sets[e.name] = { sha256 = sha256(def), definition = #def <= 400 and def or nil }
      else
        sets[e.name] = { sha256 = M.unknown("the load's result names no prompts") }
      end
      if inp.tokenizer_id then tokenizers[tostring(inp.tokenizer_id)] = inp.tokenizer_file and "file" or "model" end
      if type(inp.max_tokens) == "number" then outputs[e.name] = inp.max_tokens end
    end
  end
  return any, seeds, sets, tokenizers, outputs
end

-- The manifest: the fields a scenario gathered (runara, script, params, machines, serving) and
-- what the report's loads ran with. `entries`: { {name =, inputs =}, ... } (loads and sweep points).
function M.build(fields, entries)
  local out = {}
  for k, v in pairs(fields or {}) do out[k] = v end
  local any, seeds, sets, tokenizers, outputs = load_inputs(entries or {})
  if any then
    out.seeds = seeds
    out.prompt_sets = sets
    -- Each load's output length asked for (max_tokens): part of its workload, as the prompt set is.
    if next(outputs) then out.max_tokens = outputs end
    local names = {}
    for id, kind in pairs(tokenizers) do names[#names + 1] = kind == "file" and ("tokenizer.json " .. id) or id end
    table.sort(names)
    out.tokenizer = {
      client = #names > 0 and table.concat(names, ", ") or M.unknown("the loads name no tokenizer"),
      counting = "prompt lengths as the client made them (a synthetic prompt of N tokens is N words that GPT-2 and Llama 3 read " ..
        "as one token each, unless a tokenizer.json was given); total_input_tokens as the server reported them " ..
        "(usage.prompt_tokens) where it did: each load's input_tokens_source says which",
    }
  end
  if next(out) == nil then return nil end
  return out
end

-- The manifest as rows { field, text } for the reports' Manifest table.
function M.rows(man)
  if type(man) ~= "table" then return {} end
  local rows = {}
  local function add(field, text) if text ~= nil and text ~= "" then rows[#rows + 1] = { field, tostring(text) } end end
  local function v(x) return x == nil and "—" or tostring(x) end
  if type(man.runara) == "table" then add("runara", "version " .. v(man.runara.version) .. (man.runara.run_id and (", run " .. v(man.runara.run_id)) or "")) end
  if type(man.script) == "table" then add("script", v(man.script.path) .. " · sha256 " .. v(man.script.sha256)) end
  if type(man.params) == "table" then
    local keys, parts = {}, {}
    for k in pairs(man.params) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local x = man.params[k]
      parts[#parts + 1] = k .. "=" .. (type(x) == "table" and table.concat(x, ",") or tostring(x))
    end
    add("params", #parts > 0 and table.concat(parts, " ") or "none")
  end
  local na = man.params_not_applied
  if type(na) == "table" and type(na.names) == "table" then
    local names = table.concat(na.names, ", ")
    if na.asked_model then names = (names ~= "" and (names .. "; ") or "") .. "model " .. v(na.asked_model) .. " (not served there)" end
    add("params not applied", names .. " — " .. v(na.why))
  end
  if type(man.seeds) == "table" then
    local by, order = {}, {}
    local names = {}
    for name in pairs(man.seeds) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      local s = tostring(man.seeds[name])
      if not by[s] then by[s] = {} order[#order + 1] = s end
      table.insert(by[s], name)
    end
    local parts = {}
    for _, s in ipairs(order) do parts[#parts + 1] = s .. " (" .. table.concat(by[s], ", ") .. ")" end
    add("seeds", table.concat(parts, "; "))
  end
  if type(man.prompt_sets) == "table" then
    local names = {}
    for name in pairs(man.prompt_sets) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do add("prompt set: " .. name, "sha256 " .. v(man.prompt_sets[name].sha256)) end
  end
  for _, m in ipairs(type(man.machines) == "table" and man.machines or {}) do
    local p = (#man.machines > 1 and (v(m.label) .. ": ") or "")
    if m.note then add(p .. "machine", m.note) goto next_machine end
    add(p .. "machine", string.format("%s · size %s · region %s · image %s", v(m.name), v(m.size), v(m.region), v(m.image)))
    add(p .. "GPU", string.format("%s × %s · %s GiB each · driver %s%s%s", v(m.gpu_count), v(m.gpu), v(m.gpu_vram_gib), v(m.driver_version),
      m.rocm_version ~= nil and (" · ROCm " .. v(m.rocm_version)) or "", m.cuda_version ~= nil and (" · CUDA " .. v(m.cuda_version)) or ""))
    add(p .. "kernel, OS", string.format("%s (%s) · %s", v(m.kernel), v(m.arch), v(m.os)))
    ::next_machine::
  end
  for _, s in ipairs(type(man.serving) == "table" and man.serving or {}) do
    local p = (type(man.machines) == "table" and #man.machines > 1 and s.machine) and (v(s.machine) .. ": ") or ""
    add(p .. "serving image", s.image and (v(s.image) .. (s.image_digest and (" · digest " .. v(s.image_digest)) or "")) or nil)
    add(p .. "vLLM", "version " .. v(s.vllm_version))
    add(p .. "vLLM command", v(s.command))
    add(p .. "model", v(s.model) .. " · revision " .. v(s.model_revision))
  end
  if type(man.tokenizer) == "table" then add("tokenizer", v(man.tokenizer.client) .. "; " .. v(man.tokenizer.counting)) end
  return rows
end

return M
