-- runara.run_comparison_workload: whether two runs measured the same workload, so that `runara
-- compare` compares like with like. A workload is what was asked of the server: simulated or real,
-- the suite's profile, the engine, and per load (every load the manifest names), its prompt set (the hash of its
-- definition: count, input lengths, seed, tokenizer) and its output length (max_tokens), and per
-- open-loop load the origin of its TTFT and E2EL (from the send, or from the schedule in older
-- runs: the same names with another meaning). Two runs
-- differing in any of these measured different things: compare refuses them unless told
-- --allow-different-workloads, and then marks every such pair. Pure: results.json tables in.
local at = require("runara.run_comparison_manifest").at

local M = {}

local function text(v) return v == nil and "none" or tostring(v) end

-- The engine the run measured: the first word of its framework ("vLLM 0.6.4" → "vLLM"), nil when
-- not known (a running server named with --on URL: "a running server at URL (...)", or an older
-- run's "unknown").
local function engine(doc, machine_key)
  local fw = machine_key and at(doc, { "machines", machine_key, "framework" }) or at(doc, { "metadata", "framework" })
  if type(fw) ~= "string" or fw:match("^unknown") or fw:match("^a running server") then return nil end
  return fw:match("^(%S+)")
end

-- A manifest map keyed by load name (prompt_sets, max_tokens) as { [load] = value } for one side:
-- in a report of several machines, the keys "<machine label> <load>" of this side's machine.
local function per_load(side, field, value_of)
  local map, out = at(side.doc, { "manifest", field }), {}
  if type(map) ~= "table" then return out end
  local prefix = side.machine_label and (side.machine_label .. " ")
  for key, v in pairs(map) do
    if type(key) == "string" then
      local name = key
      if prefix then name = key:sub(1, #prefix) == prefix and key:sub(#prefix + 1) or nil end
      local value = name and value_of(v)
      if value ~= nil then out[name] = value end
    end
  end
  return out
end

-- Where an open-loop load's TTFT and E2EL (median_ttft_ms, p99_ttft_ms, e2el_*) start: "send"
-- in runs that also carry the from-schedule figures (mean_ttft_from_schedule_ms, vLLM's meaning),
-- "schedule" in older runs, which measured them from the schedule (the client's queue included).
-- nil for a closed loop, where send and schedule are one moment, and for a load without figures.
local function ttft_origin(load)
  if type(load) ~= "table" then return nil end
  local open = load.load_model == "open" or (load.load_model == nil and type(load.request_rate) == "number")
  if not open then return nil end
  return load.mean_ttft_from_schedule_ms ~= nil and "send" or "schedule"
end

local function sha_of(set) return type(set) == "table" and type(set.sha256) == "string" and set.sha256:sub(1, 12) or nil end
local function number_of(v) return type(v) == "number" and v or nil end

-- The workload facts of one side of the comparison (a run, or one machine of a report of several),
-- in order: { { what, value }, ... }. side: { doc =, machine =, machine_label = }. Every
-- load the run's manifest names counts, compared or not (a sweep's points are not compared by
-- name, and still are its workload).
local function facts(side)
  local doc = side.doc
  -- Simulated or real as the run states it (a hand-written or older results.json may not).
  local stated
  for _, path in ipairs({ { "metadata", "simulated" }, { "report", "simulated" }, { "manifest", "runara", "simulated" }, { "run", "simulated" } }) do
    local v = at(doc, path)
    if type(v) == "boolean" then stated = stated or v end
  end
  local f = { { "simulated or real", stated ~= nil and (stated and "simulated" or "real") or nil } }
  local profile = at(doc, { "benchmarks", "suite_profile" }) or at(doc, { "manifest", "params", "profile" })
  f[#f + 1] = { "profile", profile ~= nil and text(profile) or nil }
  f[#f + 1] = { "engine", engine(doc, side.machine) }
  for _, spec in ipairs({ { "prompt set", "prompt_sets", sha_of }, { "output length (max_tokens)", "max_tokens", number_of } }) do
    local values = per_load(side, spec[2], spec[3])
    local names = {}
    for name in pairs(values) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do f[#f + 1] = { spec[1] .. " of " .. name, values[name] } end
  end
  local names = {}
  for name in pairs(type(side.loads) == "table" and side.loads or {}) do
    if type(name) == "string" then names[#names + 1] = name end
  end
  table.sort(names)
  for _, name in ipairs(names) do f[#f + 1] = { "TTFT origin of " .. name, ttft_origin(side.loads[name]) } end
  return f
end

-- How each other side's workload differs from the baseline's: { { run =, what =, baseline =, value = }, ... }.
-- A fact one side does not state (an older results.json, a server of unknown engine, a load only
-- one run has) is not a difference.
function M.differences(base, others)
  local out = {}
  local want = facts(base)
  for _, s in ipairs(others) do
    local by = {}
    for _, kv in ipairs(facts(s)) do by[kv[1]] = kv[2] end
    for _, kv in ipairs(want) do
      local b, v = kv[2], by[kv[1]]
      if b ~= nil and v ~= nil and tostring(b) ~= tostring(v) then
        out[#out + 1] = { run = s.key, what = kv[1], baseline = tostring(b), value = tostring(v) }
      end
    end
  end
  return out
end

-- The differences in one line, a load's facts grouped per run: "simulated or real: simulated (a1)
-- vs real (b2); prompt set of throughput, ttft: 787a503490b1 (a1) vs 15e7e24814ab (b2) at throughput".
function M.line(diffs, baseline)
  local groups, order = {}, {}
  for _, d in ipairs(diffs) do
    local kind, load = d.what:match("^(.-) of (.+)$")
    local key = d.run .. "\0" .. (kind or d.what)
    if not groups[key] then
      groups[key] = { kind = kind or d.what, first = d, loads = {} }
      order[#order + 1] = key
    end
    if load then table.insert(groups[key].loads, load) end
  end
  local parts = {}
  for _, key in ipairs(order) do
    local g = groups[key]
    local d = g.first
    local head = g.kind .. (#g.loads > 0 and (" of " .. table.concat(g.loads, ", ")) or "")
    parts[#parts + 1] = string.format("%s: %s (%s) vs %s (%s)%s", head, d.baseline, baseline, d.value, d.run,
      #g.loads > 1 and (" at " .. g.loads[1]) or "")
  end
  return table.concat(parts, "; ")
end

return M
