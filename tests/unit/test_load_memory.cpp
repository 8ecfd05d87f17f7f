// A load's memory does not grow with its number of requests: the engine runs N requests with
// requests.jsonl's writer against the simulated server, and what it holds from the run's budget
// (sampled through the load, and at its end before anything is given back) is the same for 500
// requests and for 20,000. Before records were streamed, each worker's kept records grew the
// reservation 4096 at a time. Not a timing test: reservations are exact byte counts.
#include <catch2/catch.hpp>

#include <uv.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "load/engine.hpp"
#include "load/report.hpp"
#include "load/request_log.hpp"
#include "net/target_policy.hpp"
#include "sim/fake_llm_server.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace {

struct Measured {
  std::size_t peak_reserved = 0, reserved_at_end = 0, lines = 0;
  std::uint64_t completed = 0, left_out = 0;
  nlohmann::json input_lens;
};

Measured run_load(int port, std::uint64_t requests) {
  auto budget = std::make_shared<runara::MemoryBudget>(std::size_t{1} << 30);
  auto spec = std::make_shared<runara::LoadSpec>();
  spec->mode = runara::LoadMode::kOpenAi;
  spec->name = "memory";
  spec->url = "http://127.0.0.1:" + std::to_string(port) + "/v1/completions";
  spec->url_host = "127.0.0.1";
  spec->url_port = port;
  spec->method = "POST";
  spec->bodies = std::make_shared<const std::vector<std::string>>(
      std::vector<std::string>{R"({"model":"fake-model","prompt":"hello there","max_tokens":4,"stream":true})"});
  spec->concurrency = 8;
  spec->threads = 2;
  spec->requests = requests;
  spec->max_lengths = 100;  // input_lens: bounded here too, so both loads hold the same
  spec->memory = budget;
  auto policy = std::make_shared<runara::TargetPolicy>();
  policy->add_reachable("127.0.0.1", port);
  spec->policy = policy;

  const std::string path = runara::test::temp_dir("load-memory") + "/requests.jsonl";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  auto log = std::make_shared<runara::RequestLog>(fd, "requests.jsonl", spec->request_queue_bytes, spec->threads, budget);

  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  Measured m;
  uv_timer_t sampler;
  uv_timer_init(&loop, &sampler);
  sampler.data = &m;
  // The budget is an atomic counter: the loop samples it while the workers run.
  static std::shared_ptr<runara::MemoryBudget> sampled;
  sampled = budget;
  uv_timer_start(&sampler, [](uv_timer_t* t) {
    auto* me = static_cast<Measured*>(t->data);
    me->peak_reserved = std::max(me->peak_reserved, sampled->reserved());
  }, 1, 1);
  runara::LoadEngine engine(&loop, spec, nullptr);
  engine.write_requests_to(log);
  log.reset();
  std::string write_error;
  engine.start([&](runara::LoadOutcome& outcome) {
    m.peak_reserved = std::max(m.peak_reserved, budget->reserved());
    m.reserved_at_end = budget->reserved();
    m.completed = outcome.stats.completed;
    m.left_out = outcome.left_out;
    m.input_lens = runara::load_result_json(*spec, outcome, "x")["input_lens"];
    write_error = outcome.request_log->finish();
    uv_timer_stop(&sampler);
    uv_close(reinterpret_cast<uv_handle_t*>(&sampler), nullptr);
  });
  uv_run(&loop, UV_RUN_DEFAULT);
  REQUIRE(uv_loop_close(&loop) == 0);
  CHECK(write_error.empty());
  CHECK(budget->reserved() == 0);  // everything given back with the outcome and the log
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) ++m.lines;
  return m;
}

}  // namespace

TEST_CASE("http_load: what a load holds does not grow with its number of requests", "[http_load][memory]") {
  runara::FakeLlmConfig cfg;
  cfg.output_tokens = 4;
  runara::FakeLlmServer server(cfg);
  const int port = server.start(0);
  REQUIRE(port > 0);
  const Measured small = run_load(port, 500);
  const Measured large = run_load(port, 20000);
  INFO("peak reserved " << small.peak_reserved << " and " << large.peak_reserved << " bytes");
  CHECK(small.completed == 500);
  CHECK(large.completed == 20000);
  CHECK(small.lines == 500);
  CHECK(large.lines == 20000);
  CHECK(small.left_out == 0);
  CHECK(large.left_out == 0);
  CHECK(small.input_lens.is_null());  // past max_lengths (100): null, nothing kept
  CHECK(large.input_lens.is_null());
  CHECK(small.reserved_at_end > 0);
  CHECK(large.reserved_at_end == small.reserved_at_end);
  CHECK(large.peak_reserved == small.peak_reserved);
}
