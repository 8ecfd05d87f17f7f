-- mlperf_llama2_70b.lua — MLPerf Inference llama2-70b (99.9) on AMD MI300X, the method of AMD's
-- blog "Reproducing Our MLPerf Inference Submission" (ROCm blogs, 28 Aug 2024): AMD's submission container runs LoadGen's Offline and Server scenarios with vLLM and the FP8
-- (Quark) model; mlperf_log_summary.txt of each is parsed into results and compared with the
-- published v4.1 submissions (AMD 8× MI300X, NVIDIA DGX 8× H100).
--
-- What it measures: samples/s and tokens/s per scenario, validity, latency percentiles, GPU power
-- throughout (per GPU, and the machine's total). The summary's headline: each scenario's samples/s,
-- tokens/s and whether LoadGen found the result VALID; the harness's raw output goes to
-- ssh/<machine>.log and logs/mlperf/, not to the terminal. Writes results.json, report.md/report.html, the harness's logs under logs/mlperf/.
-- What it costs: gpu-mi300x8-1536gb is $15.92/h; the run is capped at max_hours (default 1 h,
-- ~$16 worst case, under the default --budget of $20). Real runs need the container image built
-- as AMD's blog describes (param image=) and the quantized model and dataset on the machine
-- (params model_dir=, dataset_dir=, or prepare="a command that fetches them").
-- Rehearse it for free: runara --sim scripts/mlperf_llama2_70b.lua
-- Elsewhere: runara --on root@HOST scripts/mlperf_llama2_70b.lua (an AMD machine of yours).
-- Params: runara scripts/mlperf_llama2_70b.lua --help
local scenario = require("runara.scenario")
local mlperf = require("runara.mlperf")
local containers = require("runara.container")

local P, rep  -- the scenario's params and report (set when it starts)

local function quote(text) return "'" .. tostring(text):gsub("'", "'\\''") .. "'" end

-- The published v4.1 results for the same benchmark, from their own summaries.
local REFERENCE = require("runara.reference_numbers").mlperf_llama2_70b_v41
local PUBLISHED = REFERENCE.tokens_per_second

-- `dir`: the run's working folder on the machine (sc:workdir), the harness's /lab-hist.
local function run_scenario(s, dir, name)
  local harness = name == "Offline" and "run_tests_Offline.sh" or "run_tests_Server.sh"
  rep:phase(name)
  -- The `docker run` of AMD's harness, as AMD's reproduction blog gives it: the ROCm devices (runara.container) plus the
  -- privileges and /dev/mem its profiling needs.
  local cmd = containers.command{ vendor = "amd", purpose = "mlperf", image = P.image,
    name = "runara-mlperf-" .. runara.run_id, ipc = "host", network = "host", privileged = true,
    cap_add = { "CAP_SYS_ADMIN", "SYS_PTRACE" }, devices = { "/dev/mem" }, group_add = { "render" },
    mounts = { P.model_dir .. ":/data/llm/llama2-70b-chat",
               P.dataset_dir .. ":/data/open_orca", dir .. ":/lab-hist" },
    env = { "LAB_CLOG=/lab-hist/mlperf-results" },
    command = "bash -c 'cd /lab-mlperf-inference/code/llama2-70b-99.9/test_VllmFp8 && bash " .. harness .. "'" }
  runara.log("mlperf: LoadGen " .. name .. " running (the harness's output: ssh/" .. s.name .. ".log)")
  s:exec(cmd, { timeout = 3 * 3600, quiet = true })
  local found = s:exec("ls -t $(find " .. quote(dir .. "/mlperf-results") .. " -path '*/" .. name ..
                       "/performance/run_1/mlperf_log_summary.txt') | head -1", { quiet = true }).stdout:match("[^\n]+")
  if not found then error("mlperf: no " .. name .. " mlperf_log_summary.txt under " .. dir .. "/mlperf-results", 0) end
  local summary = mlperf.parse(s:exec("cat " .. quote(found), { quiet = true }).stdout)
  summary.path = found
  return summary
end

scenario.run({
  about = "MLPerf Inference v4.1 llama2-70b-99.9, Offline and Server, in AMD's submission container,\n" ..
          "compared with the published v4.1 results of AMD 8x MI300X and NVIDIA DGX 8x H100.",
  title = function(_, where) return "MLPerf Inference llama2-70b on " .. where end,
  needs_machine = true,
  params = {
    { name = "size", default = "gpu-mi300x8-1536gb", help = "droplet size (AMD Instinct: the harness is ROCm only)" },
    { name = "image_slug", default = "gpu-amd-base", help = "droplet image" },
    { name = "region", default = "atl1", help = "droplet region" },
    { name = "image", default = "mlperf/llama_inference:latest", help = "the MLPerf harness container image (built as AMD's MLPerf reproduction blog describes)" },
    { name = "scenarios", default = "Offline,Server", help = "LoadGen scenarios, comma-separated: Offline, Server" },
    { name = "model_dir", default = "$HOME/models/llama2-70b-chat", help = "the quantized model on the machine" },
    { name = "dataset_dir", default = "$HOME/data/open_orca", help = "the OpenOrca dataset on the machine" },
    { name = "prepare", help = "a command run on the machine first (fetch the model and dataset)" },
    { name = "max_hours", type = "number", default = 1, min = 0.01, help = "the run's time limit (watchdog.limit)" },
  },
}, function(sc)
  P, rep = sc.params, sc.report
  watchdog.limit(P.max_hours * 3600)
  for name in P.scenarios:gmatch("[^,]+") do
    if not PUBLISHED[name] then runara.usage_error("param scenarios=" .. P.scenarios .. ": '" .. name .. "' is not Offline or Server") end
  end
  rep:metadata{ size = scenario.where() == "droplet" and P.size or nil, benchmark = "MLPerf Inference v4.1 llama2-70b-99.9",
                container = P.image }
  -- The harness is AMD's MLPerf container, built for ROCm: an NVIDIA size is refused
  -- before it is created and paid for, and a machine whose tools say NVIDIA before anything runs.
  if scenario.where() == "droplet" and containers.size_vendor(P.size) == "nvidia" then
    error("mlperf: size " .. P.size .. " has NVIDIA GPUs, and this scenario runs AMD's MLPerf harness container " ..
          "(ROCm only); choose an AMD Instinct size, e.g. size=gpu-mi300x8-1536gb", 0)
  end
  rep:phase("boot")
  local m = sc:machine{ name = "mlperf", size = P.size, image = P.image_slug, region = P.region, gpu_interval = 2 }
  local s = m.session
  if containers.vendor(s) ~= "amd" then
    error("mlperf: " .. s.name .. " has NVIDIA GPUs (nvidia-smi), and this scenario runs AMD's MLPerf harness " ..
          "container (ROCm only); use a machine with AMD Instinct GPUs", 0)
  end
  -- The harness's results go to a new folder of this run's own (never a ~/mlperf of the machine's
  -- user), removed at the end.
  local dir = sc:workdir(m, "mlperf")
  if P.prepare then s:exec(P.prepare, { timeout = 3600 }) end
  s:exec("docker image inspect " .. P.image .. " >/dev/null 2>&1 || docker pull " .. P.image, { timeout = 1800 })
  local rows = {}
  for name in P.scenarios:gmatch("[^,]+") do
    local r = run_scenario(s, dir, name)
    local published = {}
    for who, tps in pairs(PUBLISHED[name] or {}) do published[#published + 1] = string.format("%s %.0f", who, tps) end
    table.sort(published)
    rows[#rows + 1] = { name, r.result or "?", string.format("%.2f", r.samples_per_second or 0),
                        string.format("%.1f", r.tokens_per_second or 0), table.concat(published, "; ") }
    local gpus = m.info.gpu_count
    rep:headline("MLPerf " .. name .. ", all GPUs", r.samples_per_second or 0, "samples/s", { digits = 2,
      note = string.format("%.1f tokens/s%s", r.tokens_per_second or 0, gpus and gpus > 1 and string.format(" on %d GPUs", gpus) or "") })
    rep:headline("MLPerf " .. name .. " result", r.result or "not reported", nil,
      { note = r.valid and "LoadGen's constraints met" or "LoadGen's constraints not met: not a valid MLPerf result" })
    rep:set("benchmarks.mlperf." .. name, { samples_per_second = r.samples_per_second, tokens_per_second = r.tokens_per_second,
      valid = r.valid, result = r.result, latencies_ns = r.latencies_ns, sut_name = r.sut_name })
  end
  rep:add_table("MLPerf llama2-70b", { columns = { "scenario", "result", "samples/s", "tokens/s", "published v4.1 (tokens/s)" },
    rows = rows, caption = "Published figures: " .. REFERENCE.source .. "." })
  rep:phase("done")
  if m.gpu then
    rep:add_gpu(m.gpu:stop())
    rep.gpu_sampler = nil
  end
  s:download(dir, "logs/mlperf")
  rep:add_file("logs/mlperf/", "the harness's logs and mlperf_log_summary.txt of each scenario")
end)
