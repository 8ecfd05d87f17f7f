-- runara.report_comparison_rows: the rows of the tables at the top of a report: the machines of
-- a comparison, their figures side by side, or this run's figures against a reference.
local format = require("runara.report_format")
local comparison = require("runara.comparison")

local finite, f, fixed, given = format.finite, format.f, format.fixed, format.given

-- An error's first line, at most 160 characters (the whole text is in the Error section).
local function short(text)
  local line = tostring(text):match("^[^\n]*")
  return #line > 160 and (line:sub(1, 157) .. "...") or line
end

-- The machines' table (a comparison): what each is, what it cost, whether it finished.
local MACHINE_COLUMNS = { "machine", "GPU", "size", "region", "driver", "ROCm / CUDA", "server", "price", "cost", "status" }
local function machine_rows(v)
  local rows = {}
  for _, m in ipairs(v.machines) do
    local x = m.meta or {}
    local gpu = given(x.gpu) and ((finite(x.gpu_count) and x.gpu_count > 1) and (x.gpu_count .. "× " .. tostring(x.gpu)) or tostring(x.gpu)) or "—"
    local stack = given(x.rocm_version) and ("ROCm " .. tostring(x.rocm_version)) or given(x.cuda_version) and ("CUDA " .. tostring(x.cuda_version)) or "—"
    rows[#rows + 1] = { m.label, gpu, given(x.size) or "—", given(x.region) or "—", given(x.driver_version) or "—", stack, given(x.framework) or "—",
      finite(x.hourly_usd) and ("$" .. fixed("%.2f", x.hourly_usd) .. "/h") or "—",
      finite(x.cost_usd) and ("$" .. fixed("%.4f", x.cost_usd)) or "—",
      m.error and ("failed: " .. short(m.error)) or "complete" }
  end
  return rows
end

-- Rows of the comparison of several machines (or runs): { metric, value per machine..., [ratio],
-- [each one against the baseline: difference and verdict (runara.comparison)], notes }. A
-- comparison with a `baseline` key has rows carrying `verdicts` per other machine.
local function compare_table(v)
  local cmp = v.compare
  local cols = { "Metric" }
  local base
  for _, m in ipairs(v.machines) do if m.key == cmp.baseline then base = m end end
  for _, m in ipairs(v.machines) do
    cols[#cols + 1] = m.label .. (cmp.mark_baseline and m == base and " (baseline)" or "") .. (m.error and " (failed)" or "") .. (v.simulated and " (simulated)" or "")
  end
  if cmp.ratio then cols[#cols + 1] = cmp.ratio end
  local judged = {}
  if base then
    for _, m in ipairs(v.machines) do
      if m ~= base then
        judged[#judged + 1] = m
        cols[#cols + 1] = m.label .. " vs " .. base.label
      end
    end
  end
  cols[#cols + 1] = "Notes"
  local rows = {}
  local need = v.min_samples or { p99 = 100, median = 10 }
  for _, r in ipairs(cmp.rows) do
    local row, few = { r.metric }, {}
    for _, m in ipairs(v.machines) do
      local x = r.values[m.key]
      local n = r.samples and r.samples[m.key]
      local text = x and f(x, r.digits or (math.abs(x) < 10 and 2 or 1)) or (m.error and "failed" or "—")
      local p99 = r.metric:find("p99", 1, true) ~= nil
      if x and n and n < (p99 and need.p99 or need.median) then
        text = text .. "†"
        few[#few + 1] = string.format("%s: %s of %s", m.label, p99 and "p99" or "median", fixed("%d", n))
      end
      row[#row + 1] = text
    end
    if cmp.ratio then
      local x, y = r.values[v.machines[1].key], r.values[v.machines[2].key]
      row[#row + 1] = (finite(x) and finite(y) and y ~= 0 and finite(x / y)) and fixed("%.2f", x / y) or "—"
    end
    for _, m in ipairs(judged) do
      local vd = r.verdicts and r.verdicts[m.key]
      row[#row + 1] = vd and comparison.text(vd.verdict, vd.difference_pct) or "—"
    end
    local notes = {}
    if r.better then notes[#notes + 1] = r.better .. " is better" end
    if #few > 0 then notes[#notes + 1] = table.concat(few, ", ") end
    row[#row + 1] = table.concat(notes, "; ")
    rows[#rows + 1] = row
  end
  return cols, rows
end

-- Rows of the comparison with a reference, only for what this run measured: { metric, this run,
-- reference, notes }. A published reference (reference_numbers.lua) has figures only where a
-- measurement of the same kind exists, each with its conditions; the rest say so ("none
-- published"). VRAM is what it is: what vLLM allocated (gpu_memory_utilization), never set
-- against another GPU's figure.
local function reference_rows(v)
  local b, ref = v.b, v.reference
  local c32 = b.concurrent and b.concurrent["32_requests_tokens_per_second"]
  local function r(x, unit) return x and (fixed("%.1f", x) .. (unit or "")) or "none published" end
  local util = v.meta and finite(v.meta.gpu_memory_utilization) and v.meta.gpu_memory_utilization
  local vram_note = "allocated by vLLM" .. (util and string.format(" (gpu_memory_utilization=%s)", fixed("%g", util)) or "") ..
                    ", not the model's need" .. (given(v.meta and v.meta.kv_cache) and ("; KV cache " .. v.meta.kv_cache) or "")
  local all = {
    { "Throughput (tok/s)", b.throughput and b.throughput.tokens_per_second, "", r(ref.throughput_tps), "single user" },
    { "TTFT (ms)", b.latency and b.latency.time_to_first_token_ms, "", r(ref.ttft_ms),
      "first token, median" .. (ref.ttft_note and ("; reference: " .. ref.ttft_note) or "") },
    { "Batch throughput (tok/s)", c32, "", r(ref.concurrent_32_tps),
      "32 concurrent" .. (ref.concurrent_32_note and ("; reference: " .. ref.concurrent_32_note) or "") },
    { "VRAM allocated", b.memory and b.memory.vram_used_gib, " GiB", "—", vram_note },
    { "Power draw", b.power and b.power.peak_w, " W", "none published", "peak" },
  }
  local rows = {}
  for _, x in ipairs(all) do
    if finite(x[2]) then rows[#rows + 1] = { x[1], f(x[2], x[3] == " W" and 0 or nil) .. x[3], x[4], x[5] } end
  end
  return rows
end

return {
  MACHINE_COLUMNS = MACHINE_COLUMNS,
  machine_rows = machine_rows,
  compare_table = compare_table,
  reference_rows = reference_rows,
}
