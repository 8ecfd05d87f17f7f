// The sampling engine (runtime/gpu/sampler.*, gpu/reader.*, local_target.*) against shim
// tools on PATH: streaming and polled backends, detection, and tools that hang, die or print
// garbage. No Lua here; the Lua face is tested in test_gpu_metrics_e2e.cpp.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "test_paths.hpp"
#include "gpu/reader.hpp"
#include "gpu/sampler.hpp"
#include "gpu/local_target.hpp"
#include "gpu_shims.hpp"
#include "loopback_fixtures.hpp"

using namespace runara::gpu;
using runara_test::TestLoop;

namespace {

constexpr double MiB = 1048576.0;

// Whether a process with exactly this /proc/PID/cmdline (NUL-separated) exists.
template <std::size_t N>
bool process_running(const char (&cmdline)[N]) {
  const std::string want(cmdline, N - 1);
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    const std::string args((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (args == want) return true;
  }
  return false;
}

struct Rig {
  TestLoop loop;
  gpu_test::ShimDir shims;
  std::shared_ptr<LocalTarget> target;
  std::vector<std::string> problems;
  Rig() : target(std::make_shared<LocalTarget>(&loop.loop, shims.path())) {}
  ~Rig() {
    target.reset();
    loop.close();
  }
  std::unique_ptr<GpuSampler> sampler(Backend b, double interval, double stall = 0) {
    GpuSampler::Options o;
    o.backend = b;
    o.interval_s = interval;
    o.stall_s = stall;
    return std::make_unique<GpuSampler>(&loop.loop, target, o, [this](const std::string& p) { problems.push_back(p); });
  }
  void run_for(double s) {
    const auto until = uv_hrtime() + static_cast<uint64_t>(s * 1e9);
    loop.run_until([&] { return uv_hrtime() >= until; }, s + 5);
  }
};

}  // namespace

TEST_CASE("sampler: nvidia-smi streams, readings grouped per tick and stamped on arrival", "[gpu_sampler]") {
  Rig rig;
  rig.shims.nvidia(2);
  auto s = rig.sampler(Backend::nvidia_smi, 0.05);
  s->start();
  rig.run_for(0.3);
  REQUIRE(s->mark("load"));
  rig.run_for(0.3);
  s->stop();
  CHECK(rig.problems.empty());
  REQUIRE(s->samples().size() >= 4);
  double last = -1;
  for (const Sample& sample : s->samples()) {
    REQUIRE(sample.gpus.size() == 2);
    CHECK(sample.gpus[0].index == 0);
    CHECK(sample.gpus[1].index == 1);
    CHECK(sample.t_s > last);
    last = sample.t_s;
  }
  const GpuReading& g = s->samples()[0].gpus[1];
  CHECK(g.power_w == 631.95);
  CHECK(g.vram_used_bytes == 19818 * MiB);
  CHECK(g.temp_memory_c == 54.0);
  REQUIRE(s->marks().size() == 1);
  CHECK(s->marks()[0].t_s == Approx(0.3).margin(0.2));
  CHECK(s->end_s() >= s->marks()[0].t_s);
}

TEST_CASE("sampler: amd-smi is polled at the interval and parsed from the recording", "[gpu_sampler]") {
  Rig rig;
  rig.shims.amd();
  auto s = rig.sampler(Backend::amd_smi, 0.1);
  s->start();
  rig.run_for(0.8);
  s->stop();
  CHECK(rig.problems.empty());
  REQUIRE(s->samples().size() >= 2);
  CHECK(s->samples()[0].gpus.at(0).power_w == 6.0);
  CHECK(s->samples()[0].gpus.at(0).clock_mem_mhz == 541.0);
}

TEST_CASE("sampler: a tool that hangs is killed and reported, never waited on", "[gpu_sampler]") {
  Rig rig;
  SECTION("streaming") {
    rig.shims.add("nvidia-smi", "echo \"" + gpu_test::h100_line(0) + "\"\nexec sleep 617");
    auto s = rig.sampler(Backend::nvidia_smi, 0.05, 0.4);
    s->start();
    REQUIRE(rig.loop.run_until([&] { return !s->running(); }, 5));
    REQUIRE(rig.problems.size() == 1);
    CHECK_THAT(rig.problems[0], Catch::Contains("nvidia-smi on local: no output for 0.4 s (the tool hangs)"));
    CHECK(rig.loop.run_until([] { return !process_running("sleep\0" "617\0"); }, 5));  // killed, not left behind
  }
  SECTION("polled") {
    rig.shims.add("amd-smi", "exec sleep 600");
    auto s = rig.sampler(Backend::amd_smi, 0.05, 0.4);
    s->start();
    REQUIRE(rig.loop.run_until([&] { return !s->running(); }, 5));
    REQUIRE(rig.problems.size() == 1);
    CHECK_THAT(rig.problems[0], Catch::Contains("amd-smi on local: no answer within 0.4 s (the tool hangs)"));
    CHECK(s->samples().empty());
  }
}

TEST_CASE("sampler: a tool that dies mid-run is reported with its exit and stderr", "[gpu_sampler]") {
  Rig rig;
  rig.shims.add("nvidia-smi",
                "for n in 1 2 3; do echo \"" + gpu_test::h100_line(0) + "\"; sleep 0.05; done\n"
                "echo 'Unable to determine the device handle for GPU0000:00:09.0: GPU is lost.' >&2\nexit 15");
  auto s = rig.sampler(Backend::nvidia_smi, 0.05);
  s->start();
  REQUIRE(rig.loop.run_until([&] { return !s->running(); }, 5));
  REQUIRE(rig.problems.size() == 1);
  CHECK_THAT(rig.problems[0], Catch::Contains("the tool stopped mid-run (exited with code 15; stderr: Unable to "
                                              "determine the device handle for GPU0000:00:09.0: GPU is lost.)"));
  CHECK(s->samples().size() >= 2);  // what came before the death is kept
}

TEST_CASE("sampler: garbage is counted and skipped; endless garbage stops it", "[gpu_sampler]") {
  Rig rig;
  rig.shims.add("nvidia-smi", "echo \"" + gpu_test::h100_line(0) +
                                  "\"\nwhile :; do echo '<<<garbage, 1, 2>>>'; sleep 0.01; done");
  auto s = rig.sampler(Backend::nvidia_smi, 0.05);
  s->start();
  REQUIRE(rig.loop.run_until([&] { return !s->running(); }, 5));
  REQUIRE(rig.problems.size() == 2);
  CHECK_THAT(rig.problems[0], Catch::Contains("unreadable output skipped: nvidia-smi: expected 10 comma-separated values, got 3"));
  CHECK_THAT(rig.problems[1], Catch::Contains("20 unreadable lines in a row; stopped sampling"));
  CHECK(s->unreadable() == 20);
  CHECK(s->samples().size() == 1);
}

TEST_CASE("sampler: a missing tool is a clear error", "[gpu_sampler]") {
  Rig rig;
  auto s = rig.sampler(Backend::nvidia_smi, 0.05);
  s->start();
  REQUIRE(rig.loop.run_until([&] { return !s->running(); }, 5));
  REQUIRE(rig.problems.size() == 1);
  CHECK_THAT(rig.problems[0], Catch::EndsWith("nvidia-smi on local: not found on this host (PATH=" + rig.shims.path() + ")"));
}

TEST_CASE("sampler: energy of a 300 W -> 600 W step streamed by a shim", "[gpu_sampler]") {
  Rig rig;
  // 300 W for the first 10 ticks, then 600 W.
  rig.shims.nvidia(1, "  if [ $n -ge 10 ]; then w=600; else w=300; fi\n");
  auto s = rig.sampler(Backend::nvidia_smi, 0.05);
  s->start();
  rig.run_for(1.2);
  s->stop();
  REQUIRE(rig.problems.empty());
  const auto& samples = s->samples();
  REQUIRE(samples.size() >= 15);
  // The known curve: 300 W until the first 600 W reading, 600 W after; linear in between.
  double step = 0, before = 0;
  for (std::size_t i = 1; i < samples.size(); ++i)
    if (samples[i].gpus[0].power_w == 600.0 && samples[i - 1].gpus[0].power_w == 300.0) {
      step = samples[i].t_s;
      before = samples[i - 1].t_s;
    }
  REQUIRE(step > 0);
  const double t0 = samples.front().t_s, t1 = samples.back().t_s;
  const double expected = 300 * (before - t0) + 450 * (step - before) + 600 * (t1 - step);
  auto run = summarize(samples, {}, s->end_s())[0];
  REQUIRE(run.energy_j);
  CHECK(*run.energy_j == Approx(expected).epsilon(0.01));
}

TEST_CASE("reader: auto-detects the tool once per target, reads static facts and GPUs", "[gpu_sampler]") {
  Rig rig;
  rig.shims.amd();
  DetectCache cache;
  runara::Result<Snapshot> got = Snapshot{};
  bool done = false;
  auto reader = std::make_unique<GpuReader>(&rig.loop.loop, cache);
  reader->start(rig.target, std::nullopt, true, [&](runara::Result<Snapshot> s) {
    got = std::move(s);
    done = true;
  });
  REQUIRE(rig.loop.run_until([&] { return done; }, 10));
  REQUIRE(got.error() == "");
  CHECK(got->backend == Backend::amd_smi);
  CHECK(got->facts.model == "Navi 23 [Radeon RX 6600/6600 XT");
  REQUIRE(got->gpus.size() == 1);
  CHECK(got->gpus[0].power_w == 6.0);
  REQUIRE(cache.size() == 1);
  // Once detected, nvidia-smi appearing later does not trigger a second probe.
  rig.shims.nvidia(1);
  done = false;
  reader = std::make_unique<GpuReader>(&rig.loop.loop, cache);
  reader->start(rig.target, std::nullopt, false, [&](runara::Result<Snapshot> s) {
    got = std::move(s);
    done = true;
  });
  REQUIRE(rig.loop.run_until([&] { return done; }, 10));
  CHECK(got->backend == Backend::amd_smi);
  reader.reset();
}

TEST_CASE("reader: no tool on the host names every tool it tried", "[gpu_sampler]") {
  Rig rig;
  rig.shims.add("rocm-smi", "echo 'ERROR:root:Driver not initialized (amdgpu not found in modules)'\nexit 0");
  DetectCache cache;
  runara::Result<Snapshot> got = Snapshot{};
  bool done = false;
  GpuReader reader(&rig.loop.loop, cache);
  reader.start(rig.target, std::nullopt, true, [&](runara::Result<Snapshot> s) {
    got = std::move(s);
    done = true;
  });
  REQUIRE(rig.loop.run_until([&] { return done; }, 10));
  REQUIRE_FALSE(got);
  CHECK_THAT(got.error(), Catch::StartsWith("gpu_metrics: no GPU tool answered on local: nvidia-smi on local: not found on this host"));
  CHECK_THAT(got.error(), Catch::Contains("; amd-smi on local: not found on this host"));
  CHECK_THAT(got.error(), Catch::Contains("; rocm-smi --json: not valid JSON"));
  CHECK(cache.empty());
}

// Issue 25: nvidia-smi -lms printing ever new GPU indices grew one tick without end (250 MB,
// each line compared with every reading of the tick) and stop() waited for the watchdog. A tick
// holds at most kMaxGpus readings; one more distinct index stops the sampler with that problem.
TEST_CASE("sampler: a stream of ever new GPU indices stops the sampler at 64 GPUs, at once", "[gpu_sampler]") {
  Rig rig;
  rig.shims.add("nvidia-smi", "exec awk 'BEGIN { for (i = 0; ; i++) print i \", 631.95, 19818, 81559, 100, 11, 59, 54, 1980, 2619\" }'");
  auto s = rig.sampler(Backend::nvidia_smi, 0.05);
  const auto t0 = uv_hrtime();
  s->start();
  REQUIRE(rig.loop.run_until([&] { return !s->running(); }, 5));
  CHECK(static_cast<double>(uv_hrtime() - t0) / 1e9 < 2);
  REQUIRE(rig.problems.size() == 1);
  CHECK(rig.problems[0] ==
        "nvidia-smi on local: more than 64 GPUs in one reading (distinct GPU indices without a repeat); stopped sampling");
  CHECK(s->samples().empty());
}

TEST_CASE("sampler: stop() returns at once while a tool floods 64 GPUs a tick", "[gpu_sampler]") {
  Rig rig;
  rig.shims.add("nvidia-smi",
                "exec awk 'BEGIN { for (n = 0; ; n++) for (i = 0; i < 64; i++) print i \", 631.95, 19818, 81559, 100, 11, 59, 54, 1980, 2619\" }'");
  GpuSampler::Options o;
  o.backend = Backend::nvidia_smi;
  o.interval_s = 0.05;
  std::size_t reserved = 0;
  o.reserve = [&](std::size_t bytes) {  // a budget of 8 MiB, as --max-memory would give
    if (reserved + bytes > (std::size_t{8} << 20)) return runara::Status(runara::Error{"no room"});
    reserved += bytes;
    return runara::Status();
  };
  GpuSampler s(&rig.loop.loop, rig.target, o, [&](const std::string& p) { rig.problems.push_back(p); });
  s.start();
  rig.run_for(0.3);
  const auto t0 = uv_hrtime();
  s.stop();
  CHECK(static_cast<double>(uv_hrtime() - t0) / 1e9 < 0.5);
  CHECK_FALSE(s.running());
  for (const Sample& sample : s.samples()) CHECK(sample.gpus.size() == 64);
  CHECK(reserved <= (std::size_t{8} << 20));
}

// Issue 25: marks and samples are charged at what they cost in memory, not their payload: a
// script's flood of marks is refused at the budget (a mark's 256-byte label once cost nothing),
// and a stream of one-GPU samples pays for each sample's own slot and heap block.
TEST_CASE("sampler: marks and samples are charged with their overhead, and refused at the budget", "[gpu_sampler][hostile_buffers]") {
  Rig rig;
  rig.shims.add("nvidia-smi", "exec awk 'BEGIN { for (n = 0; ; n++) { print \"0, 1, 1, 1, 1, 1, 1, 1, 1, 1\"; print \"0, 1, 1, 1, 1, 1, 1, 1, 1, 1\" } }'");
  GpuSampler::Options o;
  o.backend = Backend::nvidia_smi;
  o.interval_s = 0.05;
  std::size_t reserved = 0;
  constexpr std::size_t kBudget = std::size_t{1} << 20;
  o.reserve = [&](std::size_t bytes) {
    if (reserved + bytes > kBudget) return runara::Status(runara::Error{"no room for " + std::to_string(bytes) + " bytes"});
    reserved += bytes;
    return runara::Status();
  };
  GpuSampler s(&rig.loop.loop, rig.target, o, [&](const std::string& p) { rig.problems.push_back(p); });
  s.start();
  const std::string label(256, 'x');
  std::size_t kept = 0;
  std::string refused;
  while ((refused = s.mark(label).error()).empty()) ++kept;
  CHECK(refused == "no room for " + std::to_string(GpuSampler::mark_cost(label)) + " bytes");
  CHECK(GpuSampler::mark_cost(label) >= 2 * sizeof(Mark) + 256 + 1);
  CHECK(kept == s.marks().size());
  CHECK(kept * GpuSampler::mark_cost(label) == reserved);
  CHECK(s.reserved_bytes() == reserved);
  CHECK(GpuSampler::mark_cost("short") == 2 * sizeof(Mark));  // held inside the std::string: no heap block
  // The budget is full: the first sample of one GPU stops the sampler, charged as a whole sample.
  REQUIRE(rig.loop.run_until([&] { return !s.running(); }, 5));
  REQUIRE_FALSE(rig.problems.empty());
  std::vector<GpuReading> one(1);
  CHECK(rig.problems.back() == "gpu_metrics: no room for " + std::to_string(GpuSampler::sample_cost(one)) + " bytes; stopped sampling");
  CHECK(GpuSampler::sample_cost(one) == 2 * sizeof(Sample) + sizeof(GpuReading) + 16);
  CHECK(reserved <= kBudget);
}

// Issue 25: a flaky tool (every other read fails) reports a problem every other interval for as
// long as the sampler runs; all of them were kept, a list growing with time outside the budget.
// The results keep the first 99 and one entry counting the rest with the latest; every problem
// still reaches on_problem (run.log).
TEST_CASE("sampler: the problems a flaky tool reports are kept to 100 entries, the latest last", "[gpu_sampler][hostile_buffers]") {
  Rig rig;
  const std::string fixtures = std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/gpu/amd-smi/";
  rig.shims.add("amd-smi", "n=$(cat '" + rig.shims.dir() + "/n' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '" +
                               rig.shims.dir() + "/n'\nif [ $((n % 2)) = 1 ]; then echo \"flaky read $n\" >&2; exit 1; fi\n"
                               "cat '" + fixtures + "radeon-rx6600-amdsmi-list-shape-metric.json'");
  auto s = rig.sampler(Backend::amd_smi, 0.005, 5);
  s->start();
  REQUIRE(rig.loop.run_until([&] { return rig.problems.size() >= 150 || !s->running(); }, 60));
  s->stop();
  REQUIRE(rig.problems.size() >= 150);
  const auto& kept = s->problems();
  REQUIRE(kept.size() == runara::ProblemList::kMax);
  for (std::size_t i = 0; i + 1 < kept.size(); ++i) CHECK(kept[i] == rig.problems[i]);
  CHECK(kept.back() == std::to_string(rig.problems.size() - 99) + " more problems not kept here (run.log has them all); the latest: " +
                           rig.problems.back());
  CHECK(s->samples().size() >= 50);  // the reads between the failures were kept
}
