// http_load.run's plan as the engine makes it from plain options (runtime/load_job/plan.*), what
// a run's loads share (run_loads.*), what the load agent may be asked to do (remote_agent.*) and
// the run's target policy made in one place (net/run_policy.*): no Lua, no run.
#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "load/request_target.hpp"
#include "load_job/plan.hpp"
#include "load_job/remote_agent.hpp"
#include "load_job/run_loads.hpp"
#include "net/run_policy.hpp"

namespace {

runara::LoadOptions options(std::vector<double> concurrency, std::vector<double> rates = {}) {
  runara::LoadOptions o;
  o.url = runara::parse_target_url("http://127.0.0.1:8000/x").value();
  o.base.requests = 10;
  o.concurrency = std::move(concurrency);
  o.rates = std::move(rates);
  o.cores = 4;
  return o;
}

struct Machine final : runara::CommandTarget {
  std::string name() const override { return "gpu-1"; }
  std::unique_ptr<Running> run(const std::string&, Handlers) override { return nullptr; }
  std::string address() const override { return "203.0.113.7"; }
  int port() const override { return 22; }
};

}  // namespace

TEST_CASE("load plan: one point, named as given, threads sized to its load", "[load_plan]") {
  auto o = options({64});
  o.name = "first";
  const auto plan = runara::make_load_plan(std::move(o));
  REQUIRE(plan);
  REQUIRE(plan->points.size() == 1);
  CHECK(plan->points[0].name == "first");
  CHECK(plan->points[0].concurrency == 64);
  CHECK(plan->points[0].threads == 1);
  CHECK(plan->points[0].threads_auto);
  CHECK(plan->points[0].url == "http://127.0.0.1:8000/x");
  CHECK(plan->points[0].method == "GET");
  CHECK((*plan->points[0].echo)["requests"] == 10);
  CHECK(runara::load_folders(*plan) == std::vector<std::string>{"first"});
}

TEST_CASE("load plan: a sweep has a point per value, each in its own folder, and a folder of its own", "[load_plan]") {
  auto o = options({}, {0.5, 2000, 4000});
  o.load_number = 3;
  o.threads = 2;
  auto plan = runara::make_load_plan(std::move(o));
  REQUIRE(plan);
  REQUIRE(plan->points.size() == 3);
  CHECK(plan->points[0].name == "http_load-3-r0.5");
  CHECK(plan->points[2].name == "http_load-3-r4000");
  CHECK(plan->points[2].threads == 2);
  CHECK_FALSE(plan->points[2].threads_auto);
  CHECK(plan->points[0].headers == plan->points[2].headers);  // shared, not copied
  runara::place_load_plan(*plan, "/out", nullptr);
  CHECK(plan->sweep_dir == "/out/http_load-3");
  CHECK(runara::load_folders(*plan).back() == "http_load-3");
}

TEST_CASE("load plan: openai mode aims at the endpoint and echoes the prompts", "[load_plan]") {
  auto o = options({1});
  o.url = runara::parse_target_url("http://127.0.0.1:8000").value();
  o.base.mode = runara::LoadMode::kOpenAi;
  o.openai.model = "m";
  o.openai.endpoint = "chat";
  o.summary_metrics = {"ttft"};
  const auto plan = runara::make_load_plan(std::move(o));
  REQUIRE(plan);
  const auto& p = plan->points[0];
  CHECK(p.method == "POST");
  CHECK(p.model == "m");
  CHECK(p.tokenizer_id == "m");
  CHECK(p.url == "http://127.0.0.1:8000/v1/chat/completions");
  CHECK(p.headers->back() == "Content-Type: application/json");
  CHECK((*p.echo)["prompts"]["input_tokens"] == 1024);
  CHECK((*p.echo)["summary_metrics"] == nlohmann::json::array({"ttft"}));
}

TEST_CASE("load plan: what the options may not ask for", "[load_plan]") {
  CHECK(runara::make_load_plan(options({2}, {3})).error() == "give either 'concurrency' (closed loop) or 'rate' (open loop), not both");
  CHECK(runara::make_load_plan(options({0})).error() == "option 'concurrency' must be an integer number > 0 and <= 100000, got 0");
  CHECK(runara::make_load_plan(options(std::vector<double>(1001, 1))).error() == "a sweep may have at most 1000 points, got 1001");
  auto named = options({1});
  named.name = "../x";
  CHECK(runara::make_load_plan(named).error() == "option 'name' names a folder: use letters, digits, '.', '_' and '-', got \"../x\"");
  named.name = "results.json";
  CHECK_THAT(runara::make_load_plan(named).error(), Catch::Contains("is written by runara itself"));
  auto big = options({1});
  big.headers = {"X-Big: " + std::string(70000, 'x')};
  CHECK(runara::make_load_plan(big).error() == "options 'headers' and 'api_key' make 70009 bytes of headers; at most 65536 are allowed");
  auto defaulted = options({});
  const auto plan = runara::make_load_plan(defaulted);
  REQUIRE(plan);
  CHECK(plan->points.at(0).concurrency == 1);
}

TEST_CASE("run loads: a folder is the run's once, and threads are capped while loads run", "[load_plan]") {
  runara::RunLoads loads;
  CHECK(loads.next_number() == 1);
  auto make = [](const char* name, int threads) {
    auto o = options({1});
    o.name = name;
    o.threads = threads;
    return runara::make_load_plan(std::move(o)).value();
  };
  auto a = make("a", 200);
  REQUIRE(loads.admit(a));
  auto again = make("a", 1);
  CHECK_THAT(loads.admit(again).error(), Catch::StartsWith("option 'name': a load named \"a\" already ran in this run"));
  auto b = make("b", 100);
  CHECK(loads.admit(b).error() == "100 worker threads would exceed the run's cap of 256 (loads running now hold 200); lower 'threads'");
  a.on_end();  // the first load ended: its threads are free
  auto c = make("c", 100);
  CHECK(loads.admit(c));
}

TEST_CASE("remote agent: only plain http to the machine itself, and secrets only where they may go", "[load_plan]") {
  Machine machine;
  auto url = [](const char* text) { return runara::parse_target_url(text).value(); };
  CHECK(runara::check_remote_target(url("http://127.0.0.1:8000"), machine, nullptr));
  CHECK(runara::check_remote_target(url("http://10.0.0.5:8000"), machine, nullptr));
  CHECK(runara::check_remote_target(url("http://203.0.113.7:8000"), machine, nullptr));
  CHECK_THAT(runara::check_remote_target(url("https://127.0.0.1:8000"), machine, nullptr).error(), Catch::Contains("not https://"));
  CHECK_THAT(runara::check_remote_target(url("http://localhost:8000"), machine, nullptr).error(), Catch::Contains("must be a numeric address"));
  CHECK_THAT(runara::check_remote_target(url("http://198.51.100.1:8000"), machine, nullptr).error(),
             Catch::Contains("may load only the machine it runs on"));
  runara::RunReach reach;
  const auto nowhere = runara::make_run_policy(reach, "http_load", {"KEY"}, false);
  CHECK_THAT(runara::check_remote_target(url("http://127.0.0.1:8000"), machine, nowhere.get()).error(),
             Catch::StartsWith("option 'on': the load carries a secret, which would go to gpu-1: "));
  reach.secret_destinations["KEY"] = {"203.0.113.7"};
  reach.grants = {"203.0.113.7"};
  const auto bound = runara::make_run_policy(reach, "http_load", {"KEY"}, false);
  CHECK(runara::check_remote_target(url("http://127.0.0.1:8000"), machine, bound.get()));
}

TEST_CASE("run policy: the run's endpoints and grants, each secret held to its destinations", "[load_plan][target_policy]") {
  runara::RunReach reach;
  reach.reachable = {{"198.51.100.1", 0}};
  reach.grants = {"203.0.113.9:443"};
  sockaddr_storage own{}, granted{};
  REQUIRE(runara::numeric_host("198.51.100.1", 8000, own));
  REQUIRE(runara::numeric_host("203.0.113.9", 443, granted));
  std::string why;
  const auto plain = runara::make_run_policy(reach, "metrics");
  CHECK(plain->allows(reinterpret_cast<sockaddr*>(&own), "198.51.100.1", why));
  CHECK(plain->allows(reinterpret_cast<sockaddr*>(&granted), "203.0.113.9", why));
  const auto secret = runara::make_run_policy(reach, "http_load", {"KEY"}, false);
  CHECK(secret->allows(reinterpret_cast<sockaddr*>(&own), "198.51.100.1", why));
  CHECK_FALSE(secret->allows(reinterpret_cast<sockaddr*>(&granted), "203.0.113.9", why));
  CHECK_FALSE(why.empty());
}

TEST_CASE("remote agent: its hash names its content", "[load_plan]") {
  const std::string path = "load_plan_agent.bin";
  std::ofstream(path) << "agent";
  const auto a = runara::agent_hash(path);
  REQUIRE(a);
  CHECK(a->size() == 16);
  std::ofstream(path) << "agent, changed";
  CHECK(runara::agent_hash(path).value() != a.value());
  std::remove(path.c_str());
  CHECK(runara::agent_hash(path).error() == "the load agent load_plan_agent.bin cannot be read");
}
