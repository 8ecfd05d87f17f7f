-- mlperf_llama2_70b.lua — MLPerf Inference llama2-70b (99.9) on AMD MI300X, seed 002's method:
-- AMD's submission container runs LoadGen's Offline and Server scenarios with vLLM and the FP8
-- (Quark) model; mlperf_log_summary.txt of each is parsed into results and compared with the
-- published v4.1 submissions (AMD 8× MI300X, NVIDIA DGX 8× H100).
--
-- What it measures: samples/s and tokens/s per scenario, validity, latency percentiles, GPU power
-- throughout. Writes results.json, report.md/report.html, the harness's logs under logs/mlperf/.
-- What it costs: gpu-mi300x8-1536gb is $15.92/h; the run is capped at max_hours (default 1 h,
-- ~$16 worst case, under the default --budget of $20). Real runs need the container image built
-- as seed 002 describes (param image=) and the quantized model and dataset on the machine
-- (params model_dir=, dataset_dir=, or prepare="a command that fetches them").
-- Rehearse it for free: runara --sim scripts/mlperf_llama2_70b.lua
--
-- Params: size=gpu-mi300x8-1536gb image_slug=gpu-amd-base region=atl1 image=mlperf/llama_inference:latest
--   scenarios=Offline,Server model_dir=/root/models/llama2-70b-chat dataset_dir=/root/data/open_orca
--   prepare=<command> max_hours=1
local report = require("runara.report")
local machine = require("runara.machine")
local mlperf = require("runara.mlperf")

local P = runara.params
watchdog.limit(tonumber(P.max_hours or 1) * 3600)
local size = P.size or "gpu-mi300x8-1536gb"
local image = P.image or "mlperf/llama_inference:latest"
local rep = report.new{ title = "MLPerf Inference llama2-70b on " .. size, simulated = runara.simulated }
rep:metadata{ size = size, benchmark = "MLPerf Inference v4.1 llama2-70b-99.9", container = image }

-- The published v4.1 results for the same benchmark, from their own summaries.
local PUBLISHED = {
  Offline = { ["AMD 8× MI300X"] = 23514.8, ["NVIDIA DGX 8× H100"] = 24524.9 },
  Server = { ["AMD 8× MI300X"] = 21028.23, ["NVIDIA DGX 8× H100"] = 21605.79 },
}

local function run_scenario(s, scenario)
  local harness = scenario == "Offline" and "run_tests_Offline.sh" or "run_tests_Server.sh"
  rep:phase(scenario)
  -- Seed 002's `docker run` of AMD's harness: the ROCm devices (runara.container) plus the
  -- privileges and /dev/mem its profiling needs.
  local cmd = require("runara.container").command{ vendor = "amd", purpose = "mlperf", image = image,
    name = "runara-mlperf-" .. runara.run_id, ipc = "host", network = "host", privileged = true,
    cap_add = { "CAP_SYS_ADMIN", "SYS_PTRACE" }, devices = { "/dev/mem" }, group_add = { "render" },
    mounts = { (P.model_dir or "$HOME/models/llama2-70b-chat") .. ":/data/llm/llama2-70b-chat",
               (P.dataset_dir or "$HOME/data/open_orca") .. ":/data/open_orca", "$HOME/mlperf:/lab-hist" },
    env = { "LAB_CLOG=/lab-hist/mlperf-results" },
    command = "bash -c 'cd /lab-mlperf-inference/code/llama2-70b-99.9/test_VllmFp8 && bash " .. harness .. "'" }
  s:exec(cmd, { timeout = 3 * 3600 })
  local found = s:exec("ls -t $(find mlperf/mlperf-results -path '*/" .. scenario .. "/performance/run_1/mlperf_log_summary.txt') | head -1",
                       { quiet = true }).stdout:match("[^\n]+")
  if not found then error("mlperf: no " .. scenario .. " mlperf_log_summary.txt under ~/mlperf/mlperf-results", 0) end
  local summary = mlperf.parse(s:exec("cat " .. found, { quiet = true }).stdout)
  summary.path = found
  return summary
end

local function run()
  -- The harness is AMD's MLPerf container (seed 002), built for ROCm: an NVIDIA size is refused
  -- before it is created and paid for, and a machine whose tools say NVIDIA before anything runs.
  local containers = require("runara.container")
  if containers.size_vendor(size) == "nvidia" then
    error("mlperf: size " .. size .. " has NVIDIA GPUs, and this scenario runs AMD's MLPerf harness container " ..
          "(ROCm only, seed 002); choose an AMD Instinct size, e.g. size=gpu-mi300x8-1536gb", 0)
  end
  rep:phase("boot")
  local d = droplet.create{ name = "mlperf", size = size, image = P.image_slug or "gpu-amd-base", region = P.region or "atl1" }
  rep:bill(d)  -- its cost goes into the report, a partial one too
  rep:metadata{ machine = d.name, region = d.region, hourly_usd = d.price_hourly }
  local s = ssh.connect(d, { wait_cloud_init = true })
  local info = machine.describe(s)
  rep:metadata{ gpu = info.gpu, gpu_count = info.gpu_count, gpu_vram_gb = info.gpu_vram_gb,
                driver_version = info.driver_version, rocm_version = info.rocm_version }
  if containers.vendor(s) ~= "amd" then
    error("mlperf: " .. d.name .. " has NVIDIA GPUs (nvidia-smi), and this scenario runs AMD's MLPerf harness " ..
          "container (ROCm only, seed 002); use a machine with AMD Instinct GPUs", 0)
  end
  s:exec("mkdir -p mlperf", { quiet = true })
  if P.prepare then s:exec(P.prepare, { timeout = 3600 }) end
  s:exec("docker image inspect " .. image .. " >/dev/null 2>&1 || docker pull " .. image, { timeout = 1800 })
  local gpu = gpu_metrics.start(s, { interval = 2 })
  rep.gpu_sampler = gpu
  local rows, results = {}, {}
  for scenario in (P.scenarios or "Offline,Server"):gmatch("[^,]+") do
    local r = run_scenario(s, scenario)
    results[scenario] = r
    local published = {}
    for who, tps in pairs(PUBLISHED[scenario] or {}) do published[#published + 1] = string.format("%s %.0f", who, tps) end
    table.sort(published)
    rows[#rows + 1] = { scenario, r.result or "?", string.format("%.2f", r.samples_per_second or 0),
                        string.format("%.1f", r.tokens_per_second or 0), table.concat(published, "; ") }
    rep:set("benchmarks.mlperf." .. scenario, { samples_per_second = r.samples_per_second, tokens_per_second = r.tokens_per_second,
      valid = r.valid, result = r.result, latencies_ns = r.latencies_ns, sut_name = r.sut_name })
  end
  rep:add_table("MLPerf llama2-70b", { columns = { "scenario", "result", "samples/s", "tokens/s", "published v4.1 (tokens/s)" },
    rows = rows, caption = "Published figures: the v4.1 submissions' own mlperf_log_summary.txt (shared fixtures)." })
  rep:add_gpu(gpu:stop())
  rep.gpu_sampler = nil
  s:download("mlperf", "logs/mlperf")
end

rep:run(run, function(paths) print("\nreport: " .. paths.html) end)
