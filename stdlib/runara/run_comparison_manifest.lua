-- runara.run_comparison_manifest: what a run says it ran with (results.json's manifest, written
-- by runara.manifest; or, in an older results.json, its metadata and run record) as flat fields
-- ("machines.1.gpu" = "AMD Instinct MI300X"), and the fields where runs differ: the "manifest
-- differences" of `runara compare` (run_comparison.lua). Pure: tables in, tables out.
local M = {}

-- The value at a path of keys ({ "report", "status" }) in nested tables; nil where it breaks off.
local function at(t, path)
  for _, k in ipairs(path) do
    if type(t) ~= "table" then return nil end
    t = t[k]
  end
  return t
end
M.at = at

-- Text of a manifest value, with what always differs between two runs of the same thing (the
-- run id in container names, the simulated cloud's temporary folder) made the same.
local function normal(v, run_id)
  local s = type(v) == "table" and "(table)" or tostring(v)
  if run_id and run_id ~= "" then s = s:gsub(run_id:gsub("%p", "%%%0"), "<run>") end
  s = s:gsub("runara%-sim%-%w+", "runara-sim-<tmp>")
  if #s > 200 then s = s:sub(1, 197) .. "..." end
  return s
end

-- Dotted fields of a value, at most `limit` of them.
local function flatten(v, prefix, out, limit)
  if #out >= limit then return end
  if type(v) ~= "table" then
    out[#out + 1] = { prefix, v }
    return
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do flatten(v[k], prefix == "" and tostring(k) or (prefix .. "." .. tostring(k)), out, limit) end
end

local META_KEYS = { "gpu", "gpu_count", "size", "region", "model", "quantization", "framework", "driver_version", "rocm_version", "cuda_version", "kernel", "os" }

-- What the run says it ran with, as { field = text }: the manifest (runara.manifest) where the
-- run has one, else the metadata of an older results.json; with the script, params and version.
function M.fields(doc, machine_key, run_id)
  local man = type(doc.manifest) == "table" and doc.manifest or nil
  local view = {}
  if man then
    for k, v in pairs(man) do
      if k == "machines" or k == "serving" then
        local list = {}
        for _, x in ipairs(type(v) == "table" and v or {}) do
          if type(x) == "table" and (not machine_key or x.label == machine_key or x.machine == machine_key) then
            local copy = {}
            for kk, vv in pairs(x) do if kk ~= "name" then copy[kk] = vv end end  -- the droplet's name holds the run id
            list[#list + 1] = copy
          end
        end
        view[k] = list
      elseif k == "prompt_sets" and type(v) == "table" then
        local sets = {}
        for name, p in pairs(v) do sets[name] = type(p) == "table" and p.sha256 or p end
        view[k] = sets
      elseif k == "runara" and type(v) == "table" then
        view[k] = { version = v.version, simulated = v.simulated }
      else
        view[k] = v
      end
    end
  else
    local meta = machine_key and at(doc, { "machines", machine_key }) or doc.metadata
    local m = {}
    for _, k in ipairs(META_KEYS) do if type(meta) == "table" and meta[k] ~= nil then m[k] = meta[k] end end
    view.metadata = m
    local run = type(doc.run) == "table" and doc.run or {}
    view.script = { path = run.script }
    view.params = run.params
    view.runara = { version = run.runara_version }
  end
  local flat = {}
  flatten(view, "", flat, 400)
  local out = {}
  for _, kv in ipairs(flat) do out[kv[1]] = normal(kv[2], run_id) end
  return out
end


-- The fields whose text is not the same in every side (sides: { key =, manifest = fields }, the
-- first one the baseline), at most `limit`: { { field =, values = { [key] = text } }, ... }.
function M.differences(sides, limit)
  local fields, seen, out = {}, {}, {}
  for _, s in ipairs(sides) do for k in pairs(s.manifest) do if not seen[k] then seen[k] = true fields[#fields + 1] = k end end end
  table.sort(fields)
  for _, f in ipairs(fields) do
    local first, differs = sides[1].manifest[f], false
    for _, s in ipairs(sides) do if s.manifest[f] ~= first then differs = true end end
    if differs and #out < limit then
      local values = {}
      for _, s in ipairs(sides) do values[s.key] = s.manifest[f] end
      out[#out + 1] = { field = f, values = values }
    end
  end
  return out
end

return M
