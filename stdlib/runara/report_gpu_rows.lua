-- runara.report_gpu_rows: the GPU tables' rows, the report's own GPU samples and each
-- machine's: a row per GPU over the whole sampling, and what the GPUs did in each phase.
local format = require("runara.report_format")

local finite, f, fv, gib, multi = format.finite, format.f, format.fv, format.gib, format.multi

-- GPU results by machine: { {label = (nil with one machine), gpu = results}, ... }.
local function gpu_sets(v)
  local out = {}
  if multi(v) then
    for _, m in ipairs(v.machines) do if type(m.gpu) == "table" then out[#out + 1] = { label = m.label, gpu = m.gpu } end end
  end
  if type(v.gpu) == "table" then table.insert(out, 1, { label = multi(v) and "run" or nil, gpu = v.gpu }) end
  return out
end

-- Where an energy figure came from, in a word or two: the tool's counter, the power samples
-- integrated, or both (GPUs that differ); "—" without energy. Why is in the energy notes.
local SOURCE = { counter = "counter", trapezoid = "integrated power", mixed = "counter and integrated power" }
local function energy_source(x)
  if not finite(x.energy_j) then return "—" end
  return SOURCE[x.energy_source] or (x.energy_source and tostring(x.energy_source)) or "—"
end

-- The energy notes of one sampler's results: why each figure used its source. The whole
-- sampling's always; a phase's only when it did not simply come from a counter that agrees with
-- the power samples (the "energy from" column says "counter" for those); `label`: the machine's.
local function agreeing_counter(p)
  return p.energy_source == "counter" and tostring(p.energy_note):match("^the tool's energy counter %(the power samples integrate to") ~= nil
end
local function energy_notes(g, label)
  local out = {}
  local function add(what, p)
    if type(p) == "table" and type(p.energy_note) == "string" then
      out[#out + 1] = (label and (label .. ", ") or "") .. what .. ": " .. p.energy_note
    end
  end
  add("whole sampling", g and g.summary)
  for _, p in ipairs(g and g.phases or {}) do
    local name = tostring(p.label or "")
    if not name:match(" end$") and type(p) == "table" and not agreeing_counter(p) then add((name:gsub(" start$", "")), p) end
  end
  return out
end

-- A row per GPU of one sampler's results (label: the machine's, in a comparison).
local function gpu_rows(g, label)
  local rows = {}
  for _, x in ipairs(g and g.summary and g.summary.gpus or {}) do
    local row = { f(x.index, 0), fv(x.mean_power_w), fv(x.max_power_w), fv(x.energy_j, 0), energy_source(x),
                  gib(x.max_vram_used_bytes), fv(x.mean_gpu_util_pct), fv(x.max_temp_hotspot_c or x.max_temp_edge_c, 0) }
    if label then table.insert(row, 1, label) end
    rows[#rows + 1] = row
  end
  return rows
end
local GPU_COLUMNS = { "GPU", "mean power (W)", "max power (W)", "energy (J)", "energy from", "max VRAM", "mean util (%)", "max temp (°C)" }

-- What the GPUs did in each phase (the marks of rep:phase and of each load): a load's own phase,
-- not its short lead-in nor the gap after it.
local function phase_rows(g, label)
  local rows = {}
  for _, p in ipairs(g and g.phases or {}) do
    local name = tostring(p.label or "")
    local dur = finite(p.end_s) and finite(p.start_s) and p.end_s - p.start_s or nil
    if not name:match(" end$") and dur and dur >= 0.5 then
      local maxw, util, n = nil, nil, 0
      for _, x in ipairs(p.gpus or {}) do
        if finite(x.max_power_w) then maxw = math.max(maxw or 0, x.max_power_w) end
        if finite(x.mean_gpu_util_pct) then util = math.max(util or 0, x.mean_gpu_util_pct) end
        if finite(x.samples) then n = math.max(n, x.samples) end
      end
      local row = { (name:gsub(" start$", "")), f(dur), f(n, 0), fv(p.mean_power_w), fv(maxw), fv(p.energy_j, 0), energy_source(p),
                    gib(p.peak_vram_bytes), fv(util) }
      if label then table.insert(row, 1, label) end
      rows[#rows + 1] = row
    end
  end
  return rows
end
local PHASE_COLUMNS = { "phase", "seconds", "samples", "mean power (W, all GPUs)", "max power (W)", "energy (J)", "energy from", "peak VRAM", "mean util (%)" }

return {
  gpu_sets = gpu_sets,
  GPU_COLUMNS = GPU_COLUMNS,
  gpu_rows = gpu_rows,
  PHASE_COLUMNS = PHASE_COLUMNS,
  phase_rows = phase_rows,
  energy_source = energy_source,
  energy_notes = energy_notes,
}
