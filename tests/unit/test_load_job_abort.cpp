// LoadJob::abort() while a point's results are being written (after the engine finished, before
// the thread pool's write came back): the pool's write is the only one. An abort that wrote too
// would collect the finished engine a second time and race the pool on the same .tmp files.
// Deterministic: the job's redact hook runs on the loop inside that window and aborts there.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <uv.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load_job/job.hpp"
#include "net/target_policy.hpp"
#include "sim/fake_llm_server.hpp"

namespace fs = std::filesystem;

TEST_CASE("load job: an abort while a point's results are written leaves the write to the thread pool", "[load_job]") {
  runara::FakeLlmServer server(runara::FakeLlmConfig{});
  const int port = server.start(0);
  const fs::path out = fs::temp_directory_path() / ("runara-load-job-abort-" + std::to_string(::getpid()));
  fs::remove_all(out);

  runara::LoadSpec spec;
  spec.name = "point";
  spec.url = "http://127.0.0.1:" + std::to_string(port) + "/v1/models";
  spec.url_host = "127.0.0.1";
  spec.url_port = port;
  spec.concurrency = 2;
  spec.requests = 4;
  spec.bodies = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{""});  // http mode: one template
  auto policy = std::make_shared<runara::TargetPolicy>();
  policy->add_reachable("127.0.0.1", port);
  spec.policy = policy;
  runara::LoadPlan plan;
  plan.points.push_back(spec);
  plan.out_dir = out.string();

  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  std::unique_ptr<runara::LoadJob> job;
  bool aborted = false, done = false;
  std::vector<std::string> logs;
  runara::LoadJob::Hooks hooks;
  hooks.log = [&](const std::string& line) { logs.push_back(line); };
  hooks.redact = [&](const nlohmann::json& j) {
    if (!aborted) {  // first call: the engine is done, the write not yet queued
      aborted = true;
      job->abort();
    }
    return j;
  };
  job = std::make_unique<runara::LoadJob>(&loop, std::move(plan), std::move(hooks));
  job->start([&](runara::Result<std::vector<nlohmann::json>>) { done = true; });
  uv_run(&loop, UV_RUN_DEFAULT);
  job.reset();
  uv_run(&loop, UV_RUN_DEFAULT);
  REQUIRE(uv_loop_close(&loop) == 0);

  CHECK(aborted);
  CHECK_FALSE(done);  // an aborted job does not report back
  for (const auto& line : logs) {
    INFO(line);
    CHECK(line.find("stopped") == std::string::npos);  // abort() did not write a second time
  }
  std::ifstream in(out / "point" / "results.json");
  REQUIRE(in);
  const auto r = nlohmann::json::parse(in);
  CHECK(r["completed"].get<std::uint64_t>() + r["failed"].get<std::uint64_t>() == 4);
  CHECK_FALSE(fs::exists(out / "point" / "results.json.tmp"));
  fs::remove_all(out);
}
