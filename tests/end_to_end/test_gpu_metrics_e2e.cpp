// gpu_metrics end to end: the runara binary runs a script against gpu_metrics.localhost() with
// shim tools (gpu_shims.hpp) first on its PATH: reads, sampling with marks, the CSV, a sampler
// left running at the end, tools that die, hang or print garbage, and argument errors.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "child_process.hpp"
#include "gpu_shims.hpp"

using runara::test::ChildResult;
using runara::test::run_runara;

namespace {

struct Run {
  ChildResult r;
  std::string out_dir;
  std::string file(const std::string& name) const {
    std::ifstream in(out_dir + "/" + name, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

Run run_script(const gpu_test::ShimDir& shims, const std::string& script, double timeout = 30) {
  const std::string dir = runara::test::temp_dir("gpu-e2e");
  const std::string path = runara::test::write_temp_file(dir, "scenario.lua", script);
  Run run;
  run.out_dir = dir + "/out";
  run.r = run_runara({"--out", run.out_dir, path}, timeout, {{"PATH", shims.path()}});
  return run;
}

}  // namespace

TEST_CASE("gpu_metrics.read: one snapshot from the local host's tool", "[gpu_metrics]") {
  gpu_test::ShimDir shims;
  shims.amd();
  auto run = run_script(shims, R"lua(
    local t = gpu_metrics.localhost()
    assert(gpu_metrics["local"]() == t)
    local r = gpu_metrics.read(t)
    local g = r.gpus[1]
    print(r.backend, r.static.model, r.static.gpu_count, g.index, g.power_w, g.vram_used_bytes, g.temp_hotspot_c)
    print(g.vram_used_pct == nil, r.static.rocm_version == nil)
  )lua");
  INFO(run.r.err);
  CHECK(run.r.exit_code == 0);
  CHECK(run.r.out == "amd-smi\tNavi 23 [Radeon RX 6600/6600 XT\t1\t0\t6\t211812352\t37\ntrue\ttrue\n");
}

TEST_CASE("gpu_metrics.start: samples, marks, phases, summary and CSV", "[gpu_metrics]") {
  gpu_test::ShimDir shims;
  shims.nvidia(2);
  auto run = run_script(shims, R"lua(
    local s = gpu_metrics.start(gpu_metrics.localhost(), { interval = 0.05 })
    runara.sleep(0.3)
    s:mark("concurrency=32 start")
    runara.sleep(0.3)
    local r = s:stop()
    assert(#r.samples >= 4, #r.samples)
    assert(r.samples[1].gpus[2].index == 1)
    print(r.backend, r.static.model, #r.phases, r.phases[1].label, #r.summary.gpus, #r.problems)
    print(r.summary.gpus[1].max_power_w, r.summary.gpus[2].max_vram_used_bytes, r.summary.gpus[1].energy_source)
    assert(r.summary.energy_j > 0 and r.phases[1].energy_j < r.summary.energy_j)
    assert(math.abs(r.phases[1].mean_power_w - 2 * 631.95) < 1e-6)
    s:write_csv("gpu/samples.csv")
    local ok, err = pcall(s.write_csv, s, "../escape.csv")
    print(ok, (err:gsub("^.-: ", "", 1)))
    ok, err = pcall(s.mark, s, "late")
    print(ok, (err:gsub("^.-: ", "", 1)))
  )lua");
  INFO(run.r.err);
  CHECK(run.r.exit_code == 0);
  std::istringstream lines(run.r.out);
  std::string l1, l2, l3, l4;
  std::getline(lines, l1);
  std::getline(lines, l2);
  std::getline(lines, l3);
  std::getline(lines, l4);
  CHECK(l1 == "nvidia-smi\tNVIDIA H100 80GB HBM3\t1\tconcurrency=32 start\t2\t0");
  CHECK(l2 == "631.95\t20780679168\ttrapezoid");
  CHECK_THAT(l3, Catch::StartsWith("false\tsampler:write_csv: "));
  CHECK(l4 == "false\tsampler:mark: the sampler has stopped (mark before stop())");
  const std::string csv = run.file("gpu/samples.csv");
  CHECK_THAT(csv, Catch::StartsWith("t_s,phase,gpu,power_w,"));
  CHECK_THAT(csv, Catch::Contains(",\"concurrency=32 start\",1,631.95,,20780679168,85520809984,,100,11,59,,54,1980,2619\n"));
}

TEST_CASE("gpu_metrics: a sampler still running at the end is stopped and written", "[gpu_metrics]") {
  gpu_test::ShimDir shims;
  shims.nvidia(1);
  auto run = run_script(shims, R"lua(
    local s = gpu_metrics.start(gpu_metrics.localhost(), { interval = 0.05 })
    s:mark("only phase")
    runara.sleep(0.3)
    error("the script fails while sampling")
  )lua");
  CHECK(run.r.exit_code == 1);
  CHECK_THAT(run.file("gpu_metrics_1.csv"), Catch::Contains(",\"only phase\",0,631.95,"));
  CHECK_THAT(run.file("run.log"), Catch::Contains("gpu_metrics: sampler 1 was still running at the end; stopped it, wrote gpu_metrics_1.csv"));
}

TEST_CASE("gpu_metrics: tools that die, hang or print garbage are reported, the run goes on", "[gpu_metrics]") {
  gpu_test::ShimDir shims;
  const std::string stat = "case \"$*\" in *name,vbios*) echo '0, NVIDIA H100 80GB HBM3, x, 590.48.01, 81559, 1'; exit 0;; esac\n";
  std::string body, expected;
  SECTION("dies") {
    body = "echo \"" + gpu_test::h100_line(0) + "\"; sleep 0.1; echo 'GPU is lost' >&2; exit 15";
    expected = "nvidia-smi on local: the tool stopped mid-run (exited with code 15; stderr: GPU is lost)";
  }
  SECTION("hangs") {
    body = "echo \"" + gpu_test::h100_line(0) + "\"; exec sleep 600";
    expected = "nvidia-smi on local: no output for 0.5 s (the tool hangs); killed it, stopped sampling";
  }
  SECTION("garbage") {
    body = "while :; do echo 'Segmentation fault (core dumped)'; sleep 0.01; done";
    expected = "nvidia-smi on local: 20 unreadable lines in a row; stopped sampling";
  }
  shims.add("nvidia-smi", stat + body);
  auto run = run_script(shims, R"lua(
    local s = gpu_metrics.start(gpu_metrics.localhost(), { interval = 0.05, stall_timeout = 0.5 })
    runara.sleep(1.5)
    local r = s:stop()
    print(r.running, r.problems[#r.problems])
  )lua");
  INFO(run.r.err);
  CHECK(run.r.exit_code == 0);
  CHECK(run.r.seconds < 10);
  CHECK(run.r.out == "false\t" + expected + "\n");
  CHECK_THAT(run.file("run.log"), Catch::Contains("gpu_metrics: sampler 1: " + expected));
}

TEST_CASE("gpu_metrics: no tool, bad options and wrong targets are clear errors", "[gpu_metrics]") {
  gpu_test::ShimDir shims;
  auto run = run_script(shims, R"lua(
    local t = gpu_metrics.localhost()
    local function try(f, ...) local ok, e = pcall(f, ...); print((tostring(e):gsub("^[^:]*:%d+: ", ""))) end
    try(gpu_metrics.read, t)
    try(gpu_metrics.read, t, { backend = "nvidia" })
    try(gpu_metrics.start, t, { interval = 0 })
    try(gpu_metrics.start, t, { intervall = 1 })
    try(gpu_metrics.read, "localhost")
  )lua");
  INFO(run.r.err);
  std::istringstream lines(run.r.out);
  std::string line;
  std::getline(lines, line);
  CHECK_THAT(line, Catch::StartsWith("gpu_metrics.read: gpu_metrics: no GPU tool answered on local: nvidia-smi on local: "
                                     "not found on this host (PATH=" + shims.path() + "); amd-smi on local: not found"));
  std::getline(lines, line);
  CHECK(line == "gpu_metrics.read: option 'backend' must be \"auto\", \"amd-smi\", \"rocm-smi\" or \"nvidia-smi\", got \"nvidia\"");
  std::getline(lines, line);
  CHECK(line == "gpu_metrics.start: option 'interval' must be 0.05 to 3600 seconds, got 0");
  std::getline(lines, line);
  CHECK_THAT(line, Catch::Contains("intervall"));
  std::getline(lines, line);
  CHECK(line == "gpu_metrics.read: argument #1 (target) must be an ssh session or gpu_metrics.local() (a closed session is "
                "no target), got a string");
}

TEST_CASE("http_load.run{gpu = sampler}: marks each load and adds energy to its results", "[gpu_metrics]") {
  gpu_test::ShimDir shims;
  shims.nvidia(2);
  auto run = run_script(shims, R"lua(
    local server = http_load.fake_server{ ttft_ms = 20, itl_ms = 5, output_tokens = 16 }
    local s = gpu_metrics.start(gpu_metrics.localhost(), { interval = 0.05 })
    runara.sleep(0.1)
    local r = http_load.run{ url = server.url, model = server.model, max_tokens = 16, concurrency = { 2, 4 },
                             requests = 24, gpu = s, quiet = true }
    local g = s:stop()
    for i, p in ipairs(r) do
      assert(p.energy_j > 0, "energy")
      assert(math.abs(p.output_tokens_per_joule - p.total_output_tokens / p.energy_j) < 1e-9)
      print(p.mean_power_w, p.peak_vram_bytes)
    end
    for _, m in ipairs(g.marks) do print(m.label) end
    local ok, err = pcall(http_load.run, { url = server.url, requests = 1, gpu = {} })
    print((err:gsub("^[^:]*:%d+: ", "")))
  )lua");
  INFO(run.r.err);
  CHECK(run.r.exit_code == 0);
  CHECK(run.r.out ==
        "1263.9\t20780679168\n1263.9\t20780679168\n"
        "http_load-1-c2 start\nhttp_load-1-c2 end\nhttp_load-1-c4 start\nhttp_load-1-c4 end\n"
        "http_load.run: option 'gpu' must be a sampler from gpu_metrics.start, got table\n");
  CHECK_THAT(run.file("http_load-1-c4/results.json"), Catch::Contains("\"output_tokens_per_joule\":"));
}
