-- runara.report_text: the sentences both report formats show, as plain text: the machine line
-- under the title, the cost, the PARTIAL and SIMULATED banners, where the load was generated,
-- the files, and the titles of the sweep and script tables.
local format = require("runara.report_format")

local finite, multi, fixed, given = format.finite, format.multi, format.fixed, format.given

-- What a machine is, in one line: its GPUs, where it ran, its software, the model.
local function machine_line(m)
  local parts = {}
  local function add(label, v) v = given(v) if v then parts[#parts + 1] = label .. v end end
  add("", given(m.gpu) and ((finite(m.gpu_count) and m.gpu_count > 1) and (m.gpu_count .. "× " .. tostring(m.gpu)) or m.gpu))
  -- GiB (2^30 bytes) as every memory figure of the reports; a gpu_vram_gb (10^9 bytes) alone is converted.
  local vram = finite(m.gpu_vram_gib) and m.gpu_vram_gib or (finite(m.gpu_vram_gb) and math.floor(m.gpu_vram_gb * 1e9 / 2^30 * 10 + 0.5) / 10)
  add("", vram and (format.fixed("%.4g", vram) .. " GiB each"))
  add("size ", m.size)
  add("region ", m.region)
  add("driver ", m.driver_version)
  add("ROCm ", m.rocm_version)
  add("CUDA ", m.cuda_version)
  add("", m.framework)
  add("model ", m.model)
  add("", m.quantization)
  return table.concat(parts, " · ")
end

-- The machines' cost, and when it was read: the report is written before teardown, so its figure is
-- what the machines cost up to then; run.log's, logged as each machine is destroyed, is the final one.
local function cost_line(m, several)
  if not finite(m.cost_usd) then return nil end
  local when = finite(m.cost_read_at_s) and
    (" so far, read " .. fixed("%.1f", m.cost_read_at_s) .. " s into the run as this report was written, before teardown " ..
     "(the final bill, a few seconds more, is in run.log and results.json's run.total_cost_usd)") or ""
  return "Machine cost: $" .. fixed("%.4f", m.cost_usd) .. (several and " in all (each machine's below)" or "") ..
    (finite(m.hourly_usd) and (" ($" .. fixed("%.2f", m.hourly_usd) .. "/h)") or "") .. when
end

-- The line under the title: the machine, or with several (each in its own table) only what they share.
local function top_line(v)
  if multi(v) then return machine_line({ model = v.meta.model, quantization = v.meta.quantization }) end
  return machine_line(v.meta)
end

local function banner(v)
  local out = {}
  if v.error then
    local first = v.error:match("^[^\n]*")
    if multi(v) then
      local ok = {}
      for _, m in ipairs(v.machines) do if not m.error then ok[#ok + 1] = m.label end end
      out[#out + 1] = "PARTIAL — " .. first .. (#ok > 0 and #ok < #v.machines and (" (" .. table.concat(ok, ", ") .. ": measured, below)") or "")
    else
      out[#out + 1] = "PARTIAL — the run failed before it finished: " .. first
    end
  end
  if v.simulated then
    out[#out + 1] = "SIMULATED — rehearsed with runara --sim: no GPU ran; every number below comes from the simulated machine's latency model and shims."
  end
  return out
end

-- Where the loads were generated, and the round trip a local client would have added to TTFT.
local function where_line(v)
  local hosts, rtt = {}, nil
  local function note(m)
    if type(m.load_host) == "string" then hosts[m.load_host] = true end
    if finite(m.controller_rtt_ms) and (not rtt or m.controller_rtt_ms < rtt) then rtt = m.controller_rtt_ms end
  end
  for _, l in ipairs(v.loads) do note(l.m) end
  for _, s in ipairs(v.sweeps) do for _, m in ipairs(s.rows) do note(m) end end
  local list = {}
  for h in pairs(hosts) do list[#list + 1] = h end
  table.sort(list)
  if #list == 0 then return nil end
  if #list == 1 and list[1] == "local" then
    -- A running server (--on URL) is reached straight; a server runara started, through its ssh tunnel.
    if v.meta.load_route == "direct" then
      return "Load generated on the computer runara ran on and sent straight to the server (no tunnel): the network between them is in these latencies."
    end
    return "Load generated on the machine runara ran on (through a tunnel to the server)."
  end
  local text = "Load generated on " .. table.concat(list, ", ") .. " by runara-agent, beside the server"
  if rtt then text = text .. "; the round trip from runara to it, " .. fixed("%.2f", rtt) .. " ms, is not in these latencies" end
  return text .. "."
end

-- The files the reports can vouch for: results.json, run.log, the loads' folders, what the scenario listed.
local function files_line(v)
  local parts = { "results.json (every figure above" .. ((#v.loads > 0 or #v.sweeps > 0) and ", and each load's full metrics)" or ")") }
  local folders = {}
  for _, l in ipairs(v.loads) do if type(l.m.label) == "string" then folders[#folders + 1] = l.m.label end end
  for _, s in ipairs(v.sweeps) do for _, m in ipairs(s.rows) do if type(m.label) == "string" then folders[#folders + 1] = m.label end end end
  if #folders > 0 then
    local shown = {}
    for i = 1, math.min(#folders, 12) do shown[i] = folders[i] .. "/" end
    parts[#parts + 1] = "a folder per load with its results.json and requests.jsonl (" .. table.concat(shown, ", ") ..
      (#folders > 12 and string.format(" and %d more", #folders - 12) or "") .. ")"
  end
  for _, file in ipairs(v.files or {}) do parts[#parts + 1] = file.path .. (file.what and (" (" .. file.what .. ")") or "") end
  parts[#parts + 1] = "run.log (the run's log)"
  return "Files: " .. table.concat(parts, "; ") .. "."
end

-- The headline's cost and efficiency in one sentence (benchmarks.efficiency, or a machine's):
-- the best load's steady-state figures, and the whole run all-in. nil when there is none.
local ENERGY_FROM = { counter = "the GPU tool's energy counter", trapezoid = "the power samples integrated",
                      mixed = "the counter on some GPUs, the power samples integrated on others" }
local function efficiency_line(e, label)
  if type(e) ~= "table" then return nil end
  local parts = {}
  local function usd(x) return "$" .. format.f(x, 2) end
  if e.load then
    local s = {}
    if finite(e.usd_per_million_output_tokens) then
      s[#s + 1] = usd(e.usd_per_million_output_tokens) .. " per million output tokens" ..
        (finite(e.usd_per_million_total_tokens) and (" (" .. usd(e.usd_per_million_total_tokens) .. " per million total)") or "") .. " steady-state"
    end
    if finite(e.output_tokens_per_s_per_gpu) then s[#s + 1] = format.f(e.output_tokens_per_s_per_gpu) .. " output tok/s per GPU" end
    if finite(e.interactivity_tokens_per_s_per_user) then s[#s + 1] = "interactivity " .. format.f(e.interactivity_tokens_per_s_per_user) .. " tok/s per user" end
    if finite(e.output_tokens_per_joule) then
      s[#s + 1] = format.f(e.output_tokens_per_joule, 3) .. " output tokens/J" .. (ENERGY_FROM[e.energy_source] and (" (energy from " .. ENERGY_FROM[e.energy_source] .. ")") or "")
    end
    if #s > 0 then parts[#parts + 1] = "at " .. e.load .. " (the highest output throughput): " .. table.concat(s, ", ") end
  end
  local a = e.all_in
  if type(a) == "table" and finite(a.usd_per_million_output_tokens) then
    parts[#parts + 1] = "all-in, the machine's whole life until this report ($" .. format.fixed("%.4f", a.cost_usd) .. ") over every load's tokens: " ..
      usd(a.usd_per_million_output_tokens) .. " per million output tokens" ..
      (finite(a.usd_per_million_total_tokens) and (" (" .. usd(a.usd_per_million_total_tokens) .. " per million total)") or "")
  end
  if e.cost_note then parts[#parts + 1] = e.cost_note end
  if #parts == 0 then return nil end
  return (label and (label .. " — ") or "") .. "Cost and efficiency " .. table.concat(parts, "; ") .. "."
end

-- The efficiency sentence of the report (one machine) or of each machine (a comparison).
local function efficiency_lines(v)
  local out = {}
  if multi(v) then
    for _, m in ipairs(v.machines) do
      local line = efficiency_line(v.b.machines and v.b.machines[m.key] and v.b.machines[m.key].efficiency, m.label)
      if line then out[#out + 1] = line end
    end
  else
    out[#out + 1] = efficiency_line(v.b.efficiency)
  end
  return out
end

local function sweep_title(v, s)
  local label
  for _, m in ipairs(v.machines or {}) do if m.key == s.machine then label = m.label end end
  return "Sweep: " .. s.name .. (label and (" (" .. label .. ")") or "")
end

local function table_title(v, t)
  for _, m in ipairs(v.machines or {}) do if m.key == t.machine then return m.label .. ": " .. t.name end end
  return t.name
end

-- The headline GPU figures' labels. Both are per GPU (the highest power and VRAM of any one GPU,
-- runtime/gpu/summary.hpp), which a machine of several GPUs must say beside its totals; VRAM is
-- what the GPU tool saw in use, which under vLLM is what vLLM allocated up front
-- (gpu_memory_utilization), not what the model needed.
local function gpus_of(meta)
  local n = meta and finite(meta.gpu_count) and meta.gpu_count or 1
  return n > 1 and n or nil
end
local function power_label(v)
  local n = gpus_of(v.meta)
  return n and ("peak power per GPU (highest of " .. n .. ")") or "peak GPU power"
end
local function vram_label(v)
  local n = gpus_of(v.meta)
  local util = v.meta and finite(v.meta.gpu_memory_utilization) and v.meta.gpu_memory_utilization
  local what = util and ("VRAM allocated by vLLM (gpu_memory_utilization=" .. fixed("%g", util) .. ")") or "peak VRAM"
  return what .. (n and (", per GPU (highest of " .. n .. ")") or "")
end

-- A headline figure (rep:headline) as text: its value with its digits, and its unit.
local function headline_value(h)
  local value = type(h.value) == "number" and fixed("%." .. (h.digits or 1) .. "f", h.value) or tostring(h.value)
  return value, h.unit or ""
end

return {
  machine_line = machine_line,
  cost_line = cost_line,
  top_line = top_line,
  banner = banner,
  where_line = where_line,
  files_line = files_line,
  sweep_title = sweep_title,
  efficiency_line = efficiency_line,
  efficiency_lines = efficiency_lines,
  table_title = table_title,
  power_label = power_label,
  vram_label = vram_label,
  headline_value = headline_value,
}
