-- runara.run_comparison_workload: whether two runs measured the same workload, so that `runara
-- compare` compares like with like. A workload is what was asked of the server: simulated or real,
-- the suite's profile, the engine, and per load compared, its prompt set (the hash of its
-- definition: count, input lengths, seed, tokenizer) and its output length (max_tokens). Two runs
-- differing in any of these measured different things: compare refuses them unless told
-- --allow-different-workloads, and then marks every such pair. Pure: results.json tables in.
local at = require("runara.run_comparison_manifest").at

local M = {}

local function text(v) return v == nil and "none" or tostring(v) end

-- The engine the run measured: the first word of its framework ("vLLM 0.6.4" → "vLLM"), nil when
-- not known (a running server named with --on URL says "unknown").
local function engine(doc, machine_key)
  local fw = machine_key and at(doc, { "machines", machine_key, "framework" }) or at(doc, { "metadata", "framework" })
  if type(fw) ~= "string" or fw:match("^unknown") then return nil end
  return fw:match("^(%S+)")
end

-- A load's entry in a manifest map keyed by load name: its own name, or "<machine label> <name>"
-- in a report of several machines.
local function per_load(map, name, machine_label)
  if type(map) ~= "table" then return nil end
  return map[name] or (machine_label and map[machine_label .. " " .. name]) or nil
end

-- The workload facts of one side of the comparison (a run, or one machine of a report of several).
-- side: { doc =, machine =, machine_label =, simulated = }.
local function facts(side, loads)
  local doc = side.doc
  local f = { { "simulated or real", side.simulated and "simulated" or "real" } }
  local profile = at(doc, { "benchmarks", "suite_profile" }) or at(doc, { "manifest", "params", "profile" })
  if profile ~= nil then f[#f + 1] = { "profile", text(profile) } end
  local e = engine(doc, side.machine)
  f[#f + 1] = { "engine", e, optional = true }
  for _, name in ipairs(loads) do
    local set = per_load(at(doc, { "manifest", "prompt_sets" }), name, side.machine_label)
    f[#f + 1] = { "prompt set of " .. name, type(set) == "table" and type(set.sha256) == "string" and set.sha256:sub(1, 12) or nil, optional = true }
    f[#f + 1] = { "output length (max_tokens) of " .. name, per_load(at(doc, { "manifest", "max_tokens" }), name, side.machine_label), optional = true }
  end
  return f
end

-- How each other side's workload differs from the baseline's: { { run =, what =, baseline =, value = }, ... }.
-- A fact one side does not state (an older results.json, a server of unknown engine) is not a
-- difference; profile is compared only where both runs state one.
function M.differences(base, others, loads)
  local out = {}
  local want = facts(base, loads)
  for _, s in ipairs(others) do
    local got = facts(s, loads)
    local by = {}
    for _, kv in ipairs(got) do by[kv[1]] = kv[2] end
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
