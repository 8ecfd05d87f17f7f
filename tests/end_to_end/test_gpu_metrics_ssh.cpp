// The GPU sampler through a real OpenSSH sshd on loopback (the ssh engine's test sshd), with
// shim tools first on the remote PATH: streaming and polled tools, one that dies mid-run and one
// that hangs (killed over ssh). The CommandTarget is a test adapter (tests/end_to_end/ssh_command_target.hpp)
// until the ssh binding provides the real one.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "test_processes.hpp"
#include "gpu/reader.hpp"
#include "gpu/sampler.hpp"
#include "gpu_shims.hpp"
#include "loopback_fixtures.hpp"
#include "ssh_command_target.hpp"
#include "ssh_test_session.hpp"

using namespace runara::gpu;
using runara_test::TestLoop;

namespace {

bool sleeping_613() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    if (runara::test::proc_file(entry.path() / "cmdline") == std::string("sleep\0" "613\0", 10)) return true;
  }
  return false;
}

struct SshRig {
  runara::test::SshdFixture sshd;
  TestLoop t;
  gpu_test::ShimDir shims;
  std::unique_ptr<runara::ssh::SshSession> session;
  std::shared_ptr<runara::test::SshCommandTarget> target;
  std::vector<std::string> problems;
  SshRig() : session(std::make_unique<runara::ssh::SshSession>(&t.loop, runara::test::sshd_options(sshd))) {
    REQUIRE(runara::test::connect_session(t, *session) == "");
    target = std::make_shared<runara::test::SshCommandTarget>(*session, runara::ssh::EnvList{{"PATH", shims.path()}});
  }
  ~SshRig() {
    t.run_until([] { return false; }, 0.3);  // let kills of stopped tools finish
    target.reset();
    session.reset();
    t.close();
  }
  std::unique_ptr<GpuSampler> sampler(Backend b, double interval, double stall = 0) {
    GpuSampler::Options o;
    o.backend = b;
    o.interval_s = interval;
    o.stall_s = stall;
    return std::make_unique<GpuSampler>(&t.loop, target, o, [this](const std::string& p) { problems.push_back(p); });
  }
  void run_for(double s) {
    const auto until = uv_hrtime() + static_cast<uint64_t>(s * 1e9);
    t.run_until([&] { return uv_hrtime() >= until; }, s + 5);
  }
};

}  // namespace

TEST_CASE("gpu sampler over ssh: nvidia-smi streams, amd-smi is polled and auto-detected", "[gpu_ssh]") {
  SshRig rig;
  SECTION("streaming") {
    rig.shims.nvidia(2);
    auto s = rig.sampler(Backend::nvidia_smi, 0.05);
    s->start();
    rig.run_for(0.6);
    s->stop();
    CHECK(rig.problems.empty());
    REQUIRE(s->samples().size() >= 4);
    CHECK(s->samples().back().gpus.size() == 2);
    CHECK(s->samples().back().gpus[1].power_w == 631.95);
  }
  SECTION("polled, detected once") {
    rig.shims.amd();
    DetectCache cache;
    Snapshot snap;
    bool done = false;
    GpuReader reader(&rig.t.loop, cache);
    reader.start(rig.target, std::nullopt, true, [&](runara::Result<Snapshot> x) {
      REQUIRE(x);
      snap = std::move(x.value());
      done = true;
    });
    REQUIRE(rig.t.run_until([&] { return done; }, 20));
    CHECK(snap.backend == Backend::amd_smi);
    CHECK(snap.gpus.at(0).temp_memory_c == 32.0);
    auto s = rig.sampler(snap.backend, 0.1);
    s->start();
    rig.run_for(0.8);
    s->stop();
    CHECK(rig.problems.empty());
    REQUIRE(s->samples().size() >= 2);
    CHECK(s->samples()[0].gpus.at(0).vram_total_bytes == 8176 * 1048576.0);
  }
}

TEST_CASE("gpu sampler over ssh: a tool that dies or hangs is reported and killed", "[gpu_ssh]") {
  SshRig rig;
  SECTION("dies") {
    rig.shims.add("nvidia-smi", "echo \"" + gpu_test::h100_line(0) + "\"; sleep 0.1; echo 'GPU is lost' >&2; exit 15");
    auto s = rig.sampler(Backend::nvidia_smi, 0.05);
    s->start();
    REQUIRE(rig.t.run_until([&] { return !s->running(); }, 10));
    REQUIRE(rig.problems.size() == 1);
    CHECK(rig.problems[0] ==
          "nvidia-smi on sshd on loopback: the tool stopped mid-run (exited with code 15; stderr: GPU is lost)");
  }
  SECTION("hangs") {
    rig.shims.add("nvidia-smi", "echo \"" + gpu_test::h100_line(0) + "\"; exec sleep 613");
    auto s = rig.sampler(Backend::nvidia_smi, 0.05, 0.5);
    s->start();
    REQUIRE(rig.t.run_until([&] { return !s->running(); }, 10));
    REQUIRE(rig.problems.size() == 1);
    CHECK_THAT(rig.problems[0], Catch::Contains("no output for 0.5 s (the tool hangs)"));
    CHECK(s->samples().size() == 1);
    // The remote tool is gone, not left behind (loopback: its processes are visible here).
    CHECK(rig.t.run_until([] { return !sleeping_613(); }, 10));
  }
}
