// metrics.scrape / metrics.start end to end against the simulated LLM server's vLLM-style
// /metrics, and the target policy they share with http_load.
#include <catch2/catch.hpp>

#include <atomic>
#include <sstream>

#include "child_process.hpp"
#include "loopback_fixtures.hpp"
#include "metrics/sampler.hpp"

using runara::test::run_runara;

namespace {

runara::test::ChildResult run_script(const std::string& script, std::vector<std::string> flags = {}) {
  const std::string dir = runara::test::temp_dir("metrics-e2e");
  const std::string path = runara::test::write_temp_file(dir, "scenario.lua", script);
  flags.insert(flags.end(), {"--out", dir + "/out", path});
  return run_runara(flags, 60);
}

}  // namespace

TEST_CASE("metrics.scrape reads the simulated server's vLLM /metrics", "[metrics]") {
  auto r = run_script(R"lua(
    local srv = http_load.fake_server{ ttft_ms = 2, itl_ms = 1, output_tokens = 16 }
    http_load.run{ url = srv.url, model = srv.model, max_tokens = 16, concurrency = 2, requests = 8, quiet = true }
    local m = metrics.scrape(srv.url .. "/metrics")
    local f = m.families["vllm:time_to_first_token_seconds"]
    print(m.values["vllm:generation_tokens_total"], m.values["vllm:num_requests_running"],
          m.values["vllm:time_to_first_token_seconds_count"], f.type, f.samples[1].labels.model_name == srv.model)
    print(m.values["vllm:request_success_total"], m.families["vllm:num_requests_waiting"].help)
  )lua");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "128\t0\t8\thistogram\ttrue\n8\tNumber of requests waiting to be processed.\n");
}

TEST_CASE("metrics.start samples through a load with phase marks", "[metrics]") {
  auto r = run_script(R"lua(
    local srv = http_load.fake_server{ ttft_ms = 2, itl_ms = 1, output_tokens = 16 }
    local s = metrics.start(srv.url .. "/metrics", { interval = 0.05, prefix = "vllm:" })
    runara.sleep(0.2)
    s:mark("load")
    http_load.run{ url = srv.url, model = srv.model, max_tokens = 16, concurrency = 2, requests = 8, quiet = true }
    runara.sleep(0.3)
    s:mark("after")
    runara.sleep(0.2)
    local res = s:stop()
    local load = res.phases[1].metrics["vllm:generation_tokens_total"]
    print(#res.phases, res.phases[1].label, load.delta, res.summary.metrics["vllm:generation_tokens_total"].last)
    print(res.phases[2].metrics["vllm:generation_tokens_total"].delta, res.samples[1].values["process_open_fds"], #res.problems)
  )lua");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "2\tload\t128\t128\n0\tnil\t0\n");
}

TEST_CASE("metrics: the target policy, bad URLs and HTTP errors are clear errors", "[metrics]") {
  auto r = run_script(R"lua(
    local srv = http_load.fake_server{}
    local function try(f, ...) local ok, e = pcall(f, ...); print((tostring(e):gsub("^[^:]*:%d+: ", ""))) end
    try(metrics.scrape, "http://127.0.0.1:9/metrics")
    try(metrics.scrape, "http://169.254.169.254/metadata/v1/")
    try(metrics.scrape, "file:///etc/passwd")
    try(metrics.scrape, srv.url .. "/no-such-page")
    try(metrics.start, srv.url, { interval = 0 })
  )lua");
  INFO(r.err);
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  CHECK_THAT(line, Catch::StartsWith("metrics.scrape: http://127.0.0.1:9/metrics: "));
  CHECK_THAT(line, Catch::Contains("loopback"));
  std::getline(lines, line);
  CHECK_THAT(line, Catch::Contains("cloud metadata"));
  std::getline(lines, line);
  CHECK_THAT(line, Catch::StartsWith("metrics.scrape: url must be an http:// or https:// URL"));
  std::getline(lines, line);
  CHECK_THAT(line, Catch::EndsWith("/no-such-page: HTTP 404 (expected 200 with Prometheus text)"));
  std::getline(lines, line);
  CHECK(line == "metrics.start: option 'interval' must be 0.05 to 3600 seconds, got 0");
}

TEST_CASE("metrics.get: any status is an answer, no connection is an error, the target policy holds", "[metrics]") {
  auto r = run_script(R"lua(
    local srv = http_load.fake_server{}
    local ok = metrics.get(srv.url .. "/v1/models")
    print(ok.status, ok.body:match('"id":"([^"]+)"'), ok.seconds < 5)
    print(metrics.get(srv.url .. "/nothing-here").status)
    local function try(...) local _, e = pcall(metrics.get, ...); print((tostring(e):gsub("^[^:]*:%d+: ", ""))) end
    try("http://10.0.0.1:8000/v1/models")
    try(srv.url, { timeout = 0 })
    try(srv.url, { bogus = 1 })
  )lua");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("200\tfake-model\ttrue\n404\n") == 0);
  CHECK(r.out.find("refusing to connect to 10.0.0.1:8000") != std::string::npos);
  CHECK(r.out.find("option 'timeout' must be 0.1 to 600 seconds") != std::string::npos);
  CHECK(r.out.find("unknown option 'bogus'") != std::string::npos);
}

// Issue 25: a server failing every other scrape makes the sampler report a problem every other
// interval for as long as it runs; all were kept, a list growing with time outside the budget.
// The sampler keeps the first 99 and one entry counting the rest with the latest; every problem
// still reaches on_problem (run.log).
TEST_CASE("metrics sampler: the problems a flaky server causes are kept to 100 entries, the latest last", "[metrics][hostile_buffers]") {
  runara_test::LocalServer server;
  std::atomic<int> n{0};
  server.srv.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    if (++n % 2) {
      res.status = 503;
      return;
    }
    res.set_content("vllm:num_requests_running 1\n", "application/octet-stream");
  });
  server.start();
  std::vector<std::string> problems;
  runara_test::TestLoop loop;
  {
    runara::metrics::MetricsSampler::Options o;
    o.url = server.url("/metrics");
    o.interval_s = 0.002;
    runara::metrics::MetricsSampler s(&loop.loop, o, [&](const std::string& p) { problems.push_back(p); });
    s.start();
    REQUIRE(loop.run_until([&] { return problems.size() >= 150 || !s.running(); }, 60));
    s.stop();
    REQUIRE(problems.size() >= 150);
    const auto& kept = s.problems();
    REQUIRE(kept.size() == runara::ProblemList::kMax);
    for (std::size_t i = 0; i + 1 < kept.size(); ++i) CHECK(kept[i] == problems[i]);
    CHECK(kept.back() == std::to_string(problems.size() - 99) + " more problems not kept here (run.log has them all); the latest: " +
                             problems.back());
    CHECK(s.samples().size() >= 50);
  }
  server.release = true;
  CHECK(loop.close() == 0);
}
