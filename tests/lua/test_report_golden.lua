-- runara.report's whole output on fixed inputs, compared byte for byte with golden files
-- (fixtures/report_golden/): report.md, report.html, and results.json's sections with the terminal
-- summary. A refactoring of the report modules must leave them unchanged. The inputs are the
-- fixtures' fixed figures; the time-dependent fields (metadata.timestamp, and when the cost was
-- read: metadata.cost_read_at_s and the "read N s into the run" of the cost line) are left out.
--
-- After a deliberate change of the output, write new golden files and copy them over:
--   runara --out /tmp/golden tests/lua/test_report_golden.lua write=1
--   cp /tmp/golden/report_golden/* tests/lua/fixtures/report_golden/
local t = require("t")
local report = require("runara.report")
local fx = require("fixtures.report_results")

local WRITE = runara.params.write == "1"

-- A value as text, keys sorted, numbers in full: the same table gives the same text on every run.
local function dump(v, indent, out)
  indent, out = indent or "", out or {}
  if type(v) ~= "table" then
    out[#out + 1] = type(v) == "number" and string.format("%.17g", v) or type(v) == "string" and string.format("%q", v) or tostring(v)
    return out
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) ~= type(b) then return type(a) < type(b) end
    return a < b
  end)
  out[#out + 1] = "{\n"
  for _, k in ipairs(keys) do
    out[#out + 1] = indent .. "  " .. (type(k) == "string" and k or ("[" .. tostring(k) .. "]")) .. " = "
    dump(v[k], indent .. "  ", out)
    out[#out + 1] = "\n"
  end
  out[#out + 1] = indent .. "}"
  return out
end

-- The moment the machines' cost was read, in the reports' cost line: not the same on two runs.
local function timeless(text) return (text:gsub("read [%d%.]+ s into the run", "read N s into the run")) end

local function sections(rep)
  local doc = rep:document()
  doc.metadata.timestamp = nil
  doc.metadata.cost_read_at_s = nil
  local paths = { html = "OUT/report.html" }
  return table.concat(dump(doc)) .. "\n\n" .. rep:summary(paths) .. "\n"
end

-- One machine, with everything a single-machine report can show.
local function single()
  local rep = report.new{ title = "Llama-3.3-70B-Instruct FP8 on gpu-mi300x1-192gb", simulated = true, reference = "llama70b_fp8" }
  rep:metadata{ model = "meta-llama/Llama-3.3-70B-Instruct", quantization = "FP8", gpu = "AMD Instinct MI300X", gpu_count = 1,
                gpu_vram_gib = 192, size = "gpu-mi300x1-192gb", region = "atl1", driver_version = "6.8.5", rocm_version = "6.2.0",
                framework = "vLLM 0.6.4", ran_on = "droplet 1234 (atl1)", hourly_usd = 1.99 }
  rep:bill(fx.droplet(0.0211))
  for _, l in ipairs(fx.suite_loads()) do rep:add_load(l[1], l[2], l[3]) end
  rep:add_load("mid", fx.load("mid", 8, 50, { options = { seed = 7, prompts = { input_tokens = 256, range_ratio = 0 }, max_tokens = 128 },
                                             tokenizer_id = "meta-llama/Llama-3.3-70B-Instruct" }), { kind = "load" })
  rep:manifest{ runara = { version = "0.1.0", run_id = "00000000", simulated = true },
                script = { path = "scripts/llama70b_fp8.lua", sha256 = string.rep("ab", 32), bytes = 4321 },
                params = { size = "gpu-mi300x1-192gb", profile = "quick" },
                machines = { { label = "llama70b", kind = "droplet", name = "llama70b-1", size = "gpu-mi300x1-192gb", region = "atl1",
                               image = "gpu-amd-base", price_usd_per_hour = 1.99, gpu = "AMD Instinct MI300X", gpu_count = 1, gpu_vram_gib = 192,
                               gpu_backend = "amd-smi", driver_version = "6.8.5", rocm_version = "6.2.0", kernel = "6.8.0-45-generic",
                               arch = "x86_64", os = "unknown (/etc/os-release has no PRETTY_NAME)" } },
                serving = { { machine = "llama70b", mode = "docker", image = "rocm/vllm:latest", image_digest = "rocm/vllm@sha256:" .. string.rep("0", 64),
                              vllm_version = "0.6.4", command = "docker run --rm --name runara-vllm-00000000 rocm/vllm:latest serve 'meta-llama/Llama-3.3-70B-Instruct'",
                              model = "meta-llama/Llama-3.3-70B-Instruct", model_revision = "unknown (no revision in the machine's Hugging Face cache)" } } }
  rep:add_gpu(fx.gpu())
  rep:add_server_metrics(fx.server_metrics())
  rep:add_table("GEMM", { columns = { "shape", "TFLOPS" }, rows = { { "(8192, 8192, 8192)", 644 } }, caption = "BF16, [one] run" })
  rep:add_file("gemm.jsonl", "one line per shape and dtype")
  rep:set("benchmarks.suite_profile", "quick")
  rep:set("extra.note", "kept beside the plan's sections")
  return rep
end

-- Two machines side by side (scripts/compare_mi300x_h100.lua); `fail`: the machine that fails.
local function comparison(fail)
  local rep = report.new{ title = "MI300X vs H100: meta-llama/Llama-3.3-70B-Instruct FP8", simulated = true }
  rep:metadata{ model = "meta-llama/Llama-3.3-70B-Instruct", quantization = "FP8" }
  local sides = {
    { key = "mi300x", label = "MI300X", gpu = "AMD Instinct MI300X", scale = 1, cost = 0.0211, hourly = 1.99, rocm = "6.2.0" },
    { key = "h100", label = "H100", gpu = "NVIDIA H100 80GB HBM3", scale = 0.9, cost = 0.0359, hourly = 3.39, cuda = "13.1" },
  }
  for _, s in ipairs(sides) do
    local view = rep:machine(s.key, { label = s.label, size = s.key })
    view:run(function()
      view:bill(fx.droplet(s.cost, s.key))
      view:metadata{ gpu = s.gpu, region = "atl1", hourly_usd = s.hourly, rocm_version = s.rocm, cuda_version = s.cuda,
                     framework = "vLLM 0.6.4", gpu_count = 1 }
      view:set("benchmarks.suite_profile", "quick")
      if fail == s.key then
        for i, l in ipairs(fx.suite_loads(s.scale)) do if i <= 2 then view:add_load(l[1], l[2], l[3]) end end
        error("compare_mi300x_h100.lua:62: vllm.start: the server on " .. s.key .. " exited before it was ready", 0)
      end
      for _, l in ipairs(fx.suite_loads(s.scale)) do view:add_load(l[1], l[2], l[3]) end
      view:add_sweep("sweep", { fx.load("sweep-c64", 64, 64, { output_throughput = 1600 * s.scale }) }, { files = false })
      view:add_gpu(fx.gpu({ model = s.gpu, max_power_w = s.key == "h100" and 557 or 610,
                            watts = function(tt) return (tt < 5 and 140 or 600) * s.scale end }))
      view:add_server_metrics(fx.server_metrics())
      view:add_table("own", { columns = { "k" }, rows = { { s.label } } })
    end)
  end
  if fail then rep:fail("1 of 2 machines failed: H100 (each one's error is in the report)") end
  return rep
end

-- A sweep on an 8-GPU machine (charts of the GPUs' total), load generated locally.
local function sweep()
  local rep = report.new{ title = "vLLM serving sweep: meta-llama/Llama-3.3-70B-Instruct on gpu-mi300x8-1536gb" }
  rep:metadata{ model = "meta-llama/Llama-3.3-70B-Instruct", quantization = "FP8", gpu = "AMD Instinct MI300X", gpu_count = 8 }
  local points = {}
  for _, c in ipairs({ 8, 16, 64, 256 }) do
    points[#points + 1] = fx.load("sweep-c" .. c, c, c * 2, { load_host = "local", p99_ttft_ms = c == 256 and 0 / 0 or 129.0 })
  end
  rep:add_sweep("sweep", points)
  rep:add_gpu(fx.gpu({ gpus = 8, seconds = 20, watts = function(tt, i) return (tt < 5 and 140 or 600) + i end }))
  rep:add_server_metrics(fx.server_metrics(12))
  return rep
end

-- A single-machine run that failed halfway, with text from the machine to escape.
local function partial()
  local rep = report.new{ title = "[t](javascript:alert(1)) <b>", reference = "llama70b_fp8" }
  rep:metadata{ gpu = "[x](javascript:alert(1))", driver_version = "![img](http://evil.example/x.png)",
                framework = "<img src=x onerror=alert(1)>", model = "a|b`c`\\[d]" }
  rep:add_load("throughput", fx.load("throughput", 1, 2, { output_throughput = 44 }), { kind = "throughput" })
  rep:add_load("<script>alert(1)</script>", fx.load("x", 1, 2), { kind = "load" })
  rep:add_gpu(fx.gpu({ gpus = 2, seconds = 12 }))
  rep:fail("vllm.start: the server exited before it was ready\nHIP out of memory ``` [e](javascript:alert(4))")
  return rep
end

local CASES = {
  { "single", single },
  { "comparison", comparison },
  { "comparison_partial", function() return comparison("h100") end },
  { "sweep", sweep },
  { "partial", partial },
}

for _, case in ipairs(CASES) do
  local name, build = case[1], case[2]
  t.test("golden: " .. name, function()
    local rep = build()
    local r = rep:render()
    local files = { [name .. ".md"] = timeless(r.md), [name .. ".html"] = timeless(r.html), [name .. ".results.txt"] = sections(rep) }
    for file, got in pairs(files) do
      if WRITE then
        runara.write_file("report_golden/" .. file, got)
      else
        local want = runara.read_file("fixtures/report_golden/" .. file)
        if got ~= want then
          local line = 1
          for i = 1, math.max(#got, #want) do
            if got:sub(i, i) ~= want:sub(i, i) then
              error(string.format("%s differs from the golden file at byte %d (line %d): got %q, want %q", file, i, line,
                got:sub(i, i + 80), want:sub(i, i + 80)), 0)
            end
            if got:sub(i, i) == "\n" then line = line + 1 end
          end
        end
      end
    end
  end)
end

t.done()
