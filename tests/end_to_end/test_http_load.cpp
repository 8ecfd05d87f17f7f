// http_load end to end: build/runara runs real scripts against the fake OpenAI server (in this
// process, on its own thread) and a real nginx on loopback; assertions read the results.json and
// requests.jsonl each load writes. Accuracy bounds are the issue's: TTFT median within 1 ms and ITL
// median within 0.2 ms of what the server sent (the optimised build; the medians test says why the
// sanitizer build's are wider).
#include <catch2/catch.hpp>

#include <sched.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "timer_lateness.hpp"
#include "child_process.hpp"
#include "loopback_fixtures.hpp"
#include "sim/fake_digitalocean.hpp"
#include "sim/fake_llm_server.hpp"
#include "test_text.hpp"
#include "tls_closing_server.hpp"

using nlohmann::json;
using runara::FakeLlmConfig;
using runara::FakeLlmServer;
using runara::FakeLlmTimings;
using runara::test::ChildResult;
using runara::test::read_all;

namespace {

struct LoadRun {
  ChildResult child;
  std::string out;  // the run's output folder
  json result(const std::string& name = "load") const {
    std::ifstream in(out + "/" + name + "/results.json");
    REQUIRE(in.good());
    return json::parse(in);
  }
  std::vector<json> requests(const std::string& name = "load") const {
    std::ifstream in(out + "/" + name + "/requests.jsonl");
    std::vector<json> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
  }
};

LoadRun run_script(const std::string& body, std::vector<std::string> extra = {},
                   std::map<std::string, std::string> env = {}, double timeout_s = 90) {
  static int n = 0;
  const std::string dir = runara::test::temp_dir("http_load");
  const std::string script = runara::test::write_temp_file(dir, "load" + std::to_string(++n) + ".lua", body);
  LoadRun run;
  run.out = dir + "/out";
  std::vector<std::string> args = {"--out", run.out};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(script);
  run.child = runara::test::run_runara(args, timeout_s, env);
  return run;
}

std::string allow(int port) { return "127.0.0.1:" + std::to_string(port); }

std::string url(int port) { return "http://127.0.0.1:" + std::to_string(port); }

}  // namespace

double nearest_rank_median(std::vector<double> v) {
  REQUIRE(!v.empty());
  std::sort(v.begin(), v.end());
  return v[(v.size() + 1) / 2 - 1];
}

double median(std::vector<double> v) {
  REQUIRE(!v.empty());
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

TEST_CASE("http_load medians match the server's TTFT and ITL at concurrency 1, 64, 512 and 2048", "[http_load]") {
  struct Point {
    int concurrency;
    double ttft_ms, itl_ms;
  };
  const Point point = GENERATE(Point{1, 40, 10}, Point{64, 40, 10}, Point{512, 60, 40}, Point{2048, 200, 200});
  FakeLlmConfig cfg;
  cfg.ttft_ms = point.ttft_ms;
  cfg.itl_ms = point.itl_ms;
  cfg.record_timings = true;
  // Replies of different lengths, and a first round of warmup: streams that all start and end
  // together would make the fake server (one thread, same 2 cores) answer in bursts, late.
  cfg.output_tokens_min = 4;
  cfg.output_tokens_max = 16;
  // Other work on the machine can slow a whole load (below): up to kTries loads, the last one checked.
  constexpr int kTries = 3;
  for (int attempt = 1; attempt <= kTries; ++attempt) {
    FakeLlmServer server(cfg);
    const int port = server.start(0);
    REQUIRE(port > 0);
    [[maybe_unused]] const double late_before = runara::test::timer_lateness_ms();
    const int requests = std::max(20, 2 * point.concurrency);
    const auto run = run_script("http_load.run{ name = 'load', url = '" + url(port) + "', model = 'fake-model', concurrency = " +
                                std::to_string(point.concurrency) + ", warmup = " + std::to_string(point.concurrency) +
                                ", requests = " + std::to_string(requests) + ", max_tokens = 16, prompts = { input_tokens = 32 } }",
                                {"--allow-host", allow(port)});
    INFO("concurrency " << point.concurrency << "\n" << run.child.err);
    REQUIRE(run.child.exit_code == 0);
    const json r = run.result();
    CHECK(r["completed"] == requests);
    CHECK(r["failed"] == 0);
    CHECK(r["output_tokens_source"] == "usage");
    CHECK(r["max_concurrent_requests"] == point.concurrency);
    const auto lines = run.requests();
    REQUIRE(lines.size() == static_cast<size_t>(requests + point.concurrency));
    int tokens = 0;
    std::vector<double> client_ttft, client_tpot, measured_ttft, measured_tpot;
    for (const auto& line : lines) {
      client_ttft.push_back(line["ttft_ms"]);
      client_tpot.push_back(line["tpot_ms"]);
      if (line["warmup"] == true) continue;
      tokens += line["output_tokens"].get<int>();
      measured_ttft.push_back(line["ttft_ms"]);
      measured_tpot.push_back(line["tpot_ms"]);
    }
    CHECK(r["total_output_tokens"] == tokens);

    // The reference is what the fake actually did on the wire: from the kernel's arrival time of
    // each request to its own write() of each chunk, on the same monotonic clock. On a busy 2-core
    // machine the fake answers a millisecond or more late, and that is not the client's error.
    // Every request (warmup included) on both sides, from requests.jsonl's exact per-request
    // values; ITL from results.json (measured requests only).
    const FakeLlmTimings sent = server.sent_timings();
    REQUIRE(sent.ttft_ms.size() == lines.size());
    REQUIRE(sent.tpot_ms.size() == lines.size());
    const double ttft = median(client_ttft), tpot = median(client_tpot), itl = r["median_itl_ms"];
    const double sent_ttft = median(sent.ttft_ms), sent_tpot = median(sent.tpot_ms), sent_itl = median(sent.itl_ms);
    INFO("median ttft " << ttft << " ms (sent " << sent_ttft << "), itl " << itl << " ms (sent " << sent_itl << "), tpot "
                        << tpot << " ms (sent " << sent_tpot << ")");
    // The client against the wire: what this test is for.
    //
    // Under AddressSanitizer both sides are instrumented and share two cores, and at 512 streams and
    // more the machine is saturated: the fake (one thread, in this process) answers late, its TTFT
    // most (sent TTFT 73, 80.5, 103 and 128 ms for 60 seen on this 2-core machine), and the client
    // reads a chunk later too (median ITL 0.24 ms over the wire's here, 1.17 ms over of 40 on CI's,
    // at 512 streams, running alone). The accuracy the issue asks for is the normal build's; the
    // sanitizer build holds the client to 5 % of the configured gap (never less than a fixed floor)
    // and does not hold the fake's TTFT to its setting: how late a saturated fake runs measures the
    // machine, not runara.
#if defined(__SANITIZE_ADDRESS__)
    constexpr bool kSanitized = true;
    const double kTtftMs = std::max(2.0, 0.05 * point.ttft_ms), kItlMs = std::max(0.5, 0.05 * point.itl_ms);
    constexpr double kFakeSlack = 0.3;
#else
    constexpr bool kSanitized = false;
    constexpr double kFakeSlack = 0.1;
    // The issue's bounds on an idle machine, plus how late this machine wakes a sleeping thread now
    // (timer_lateness.hpp: under 0.1 ms idle; a median 1.2 ms off at 64 streams was seen with other
    // work on the two cores, where the client's reading thread woke late, as did every other).
    const double late = std::max(late_before, runara::test::timer_lateness_ms());
    INFO("a 1 ms sleep wakes up to " << late << " ms late here now (p90)");
    const double kTtftMs = 1.0 + late, kItlMs = 0.2 + late;
#endif
    // Other work on the machine (a build beside the suite) can slow the client for a whole load
    // in a way a sleeping thread's lateness does not show (seen: 1.97 ms at 64 streams with
    // lateness 0.08 ms): the load runs again, up to three times; a client that is off by more
    // than the bound is off in every try.
    const bool within = std::abs(ttft - sent_ttft) <= kTtftMs && std::abs(itl - sent_itl) <= kItlMs &&
                        std::abs(tpot - sent_tpot) <= kItlMs;
    if (!within && attempt < kTries) {
      UNSCOPED_INFO("try " << attempt << ": median ttft " << ttft << " (sent " << sent_ttft << "), itl " << itl << " (sent "
                           << sent_itl << ")");
      continue;
    }
    CHECK(std::abs(ttft - sent_ttft) <= kTtftMs);
    CHECK(std::abs(itl - sent_itl) <= kItlMs);
    CHECK(std::abs(tpot - sent_tpot) <= kItlMs);
    // The fake kept close to what it was told, so the points are the ones the issue names.
    CHECK(std::abs(sent_itl / point.itl_ms - 1) < kFakeSlack);
    if (!kSanitized) CHECK(std::abs(sent_ttft / point.ttft_ms - 1) < kFakeSlack);
    // results.json's medians are those of the measured requests' exact values, to the histogram's
    // precision (nearest rank, bucket middle: within 0.05%).
    CHECK(r["median_ttft_ms"].get<double>() == Approx(nearest_rank_median(measured_ttft)).epsilon(0.001));
    CHECK(r["median_tpot_ms"].get<double>() == Approx(nearest_rank_median(measured_tpot)).epsilon(0.001));
    break;
  }
}

TEST_CASE("http_load results.json carries vllm bench serve's keys, and requests.jsonl one line per request", "[http_load]") {
  FakeLlmServer server(FakeLlmConfig{});
  const int port = server.start(0);
  const auto run = run_script("local r = http_load.run{ name = 'load', url = '" + url(port) +
                                  "', model = 'fake-model', concurrency = 4, requests = 40, warmup = 5, max_tokens = 8,"
                                  " slo = { ttft_ms = 1000, tpot_ms = 100 } }\n"
                                  "assert(r.completed == 40 and r.warmup_requests == 5, 'counts')\n"
                                  "print('goodput', r.request_goodput)",
                              {"--allow-host", allow(port)});
  INFO(run.child.err);
  REQUIRE(run.child.exit_code == 0);
  const json r = run.result();
  for (const char* key : {"date", "backend", "label", "model_id", "tokenizer_id", "num_prompts", "request_rate",
                          "burstiness", "max_concurrency", "duration", "completed", "failed", "total_input_tokens",
                          "total_output_tokens", "request_throughput", "request_goodput", "output_throughput",
                          "total_token_throughput", "max_output_tokens_per_s", "max_concurrent_requests",
                          "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
                          "median_tpot_ms", "std_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms", "std_itl_ms",
                          "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "std_e2el_ms", "p99_e2el_ms"}) {
    INFO(key);
    CHECK(r.contains(key));
  }
  CHECK(r["request_rate"] == "inf");
  CHECK(r["num_prompts"] == 40);
  CHECK(r["request_goodput"].get<double>() > 0);
  CHECK(r["p99.9_ttft_ms"].get<double>() >= r["p99_ttft_ms"].get<double>());
  const auto lines = run.requests();
  REQUIRE(lines.size() == 45);
  CHECK(lines[0]["warmup"] == true);
  CHECK(lines[44]["warmup"] == false);
  CHECK(lines[44]["output_tokens"] == 8);
  CHECK(lines[44]["tokens_from"] == "usage");
}

TEST_CASE("http_load's default thread count follows the cores the process may use (taskset)", "[http_load]") {
  FakeLlmServer server(FakeLlmConfig{});
  const int port = server.start(0);
  // 600 slots ask for 3 threads (one per 256 slots); the cores allowed cap it. The child
  // inherits this process's affinity, as under `taskset -c 0 runara ...`.
  cpu_set_t all, one;
  REQUIRE(sched_getaffinity(0, sizeof all, &all) == 0);
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &all)) continue;
    CPU_SET(cpu, &one);
    break;
  }
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  const auto run = run_script("local r = http_load.run{ name = 'load', url = '" + url(port) +
                                  "', model = 'fake-model', concurrency = 600, requests = 600, max_tokens = 2 }\n"
                                  "print('threads ' .. r.threads)",
                              {"--allow-host", allow(port)});
  REQUIRE(sched_setaffinity(0, sizeof all, &all) == 0);
  INFO(run.child.err);
  REQUIRE(run.child.exit_code == 0);
  CHECK(run.child.out.find("threads 1\n") != std::string::npos);
  CHECK(run.result()["threads"] == 1);
}

TEST_CASE("http_load open loop keeps its rate and measures from the intended send time", "[http_load]") {
  FakeLlmConfig cfg;
  cfg.ttft_ms = 5;
  cfg.itl_ms = 1;
  cfg.output_tokens = 4;
  FakeLlmServer server(cfg);
  const int port = server.start(0);

  SECTION("constant arrivals: achieved send rate within 1% of the target") {
    const auto run = run_script("http_load.run{ name = 'load', url = '" + url(port) +
                                    "', model = 'fake-model', rate = 200, arrival = 'constant', requests = 400, max_tokens = 4 }",
                                {"--allow-host", allow(port)});
    INFO(run.child.err);
    REQUIRE(run.child.exit_code == 0);
    const json r = run.result();
    CHECK(r["completed"] == 400);
    CHECK(std::abs(r["achieved_send_rate"].get<double>() / 200 - 1) < 0.01);
    CHECK(r["mean_queue_ms"].get<double>() < 2);
    // Sends wake on a timerfd, not a millisecond uv timer (which made the median ~0.7 ms late).
    CHECK(r["median_queue_ms"].get<double>() < 0.5);
  }
  SECTION("Poisson arrivals: the client keeps to its schedule") {
    // Up to three loads: a build beside the suite once held a whole 2 s load back by 1.3 %; a
    // client that does not keep its schedule misses in every try.
    double off = 1;
    for (int attempt = 1; attempt <= 3 && off >= 0.01; ++attempt) {
      const auto run = run_script("http_load.run{ name = 'load', url = '" + url(port) +
                                      "', model = 'fake-model', rate = 200, requests = 400, max_tokens = 4, seed = 7 }",
                                  {"--allow-host", allow(port)});
      REQUIRE(run.child.exit_code == 0);
      const json r = run.result();
      off = std::abs(r["achieved_send_rate"].get<double>() / r["scheduled_send_rate"].get<double>() - 1);
      UNSCOPED_INFO("try " << attempt << ": achieved / scheduled send rate off by " << off);
      CHECK(std::abs(r["scheduled_send_rate"].get<double>() / 200 - 1) < 0.15);  // 400 exponential gaps
    }
    CHECK(off < 0.01);
  }
  SECTION("a server slower than the rate: latency grows with the backlog (no coordinated omission)") {
    server.stop();
    cfg.ttft_ms = 30;
    cfg.itl_ms = 0;
    cfg.output_tokens = 1;
    cfg.record_timings = true;
    server.set_config(cfg);
    const int slow = server.start(0);
    // One request at a time (max_concurrency = 1), one due every 20 ms, each takes 30 ms: request
    // i waits 10*i ms for its turn, and its latency must show that wait.
    const auto run = run_script("http_load.run{ name = 'load', url = '" + url(slow) +
                                    "', model = 'fake-model', rate = 50, arrival = 'constant', max_concurrency = 1,"
                                    " requests = 40, max_tokens = 1 }",
                                {"--allow-host", allow(slow)});
    INFO(run.child.err);
    REQUIRE(run.child.exit_code == 0);
    const auto lines = run.requests();
    REQUIRE(lines.size() == 40);
    // What the server took for each request, on the wire (one at a time, so in the same order).
    const FakeLlmTimings served = server.sent_timings();
    REQUIRE(served.ttft_ms.size() == lines.size());
    CHECK(median(served.ttft_ms) == Approx(30).epsilon(0.1));
    std::vector<double> reaction_ms, overhead_ms;
    for (size_t i = 1; i < lines.size(); ++i) {
      const json& now = lines[i];
      const json& before = lines[i - 1];
      const double e2el = now["e2el_ms"], queue = now["queue_ms"];
      const double previous_done = before["sent_ms"].get<double>() + before["e2el_ms"].get<double>();  // e2el_ms: from the send
      INFO("request " << i << ": e2el " << e2el << " queue " << queue << ", previous done at " << previous_done
                      << ", served in " << served.ttft_ms[i] << " ms");
      CHECK(now["intended_ms"].get<double>() == Approx(20.0 * static_cast<double>(i)).margin(0.01));  // the schedule holds
      CHECK(queue > before["queue_ms"].get<double>());                               // the backlog grows...
      // ...and shows in the latency from the schedule (queue + e2el_ms, e2el_ms being vLLM's,
      // from the send): what is left after the wait is the server's time plus the client's own
      // overhead, well under the 10 ms the backlog grows by per request.
      CHECK(std::abs(e2el - served.ttft_ms[i]) < 5.0);
      overhead_ms.push_back(std::abs(e2el - served.ttft_ms[i]));
      reaction_ms.push_back(now["sent_ms"].get<double>() - previous_done);
    }
    // Each request goes out as soon as the slot frees, not at a later tick of the 20 ms schedule
    // (a late wake-up of the client's thread on a busy machine is the only delay).
    INFO("sent after the slot freed: median " << median(reaction_ms) << " ms, max "
                                              << *std::max_element(reaction_ms.begin(), reaction_ms.end()) << " ms");
    CHECK(median(reaction_ms) < 1.0);
    // The client's overhead is typically far under a millisecond; one late wake-up of a thread on
    // a busy machine (seen: 1.09 ms under AddressSanitizer in CI) is not a measurement error.
    INFO("latency beyond queue and server time: median " << median(overhead_ms) << " ms, max "
                                                        << *std::max_element(overhead_ms.begin(), overhead_ms.end()));
    CHECK(median(overhead_ms) < 1.0);
    CHECK(*std::min_element(reaction_ms.begin(), reaction_ms.end()) >= 0);
    const json r = run.result();
    CHECK(r["p99_e2el_from_schedule_ms"].get<double>() > 350);  // the backlog, seen from the schedule
    CHECK(r["p99_e2el_ms"].get<double>() < 100);                 // vLLM's, from the send: the server's 30 ms
    CHECK(r["median_queue_ms"].get<double>() > 150);
  }
}

TEST_CASE("http_load sweeps, chat, non-streaming and server-side failures", "[http_load]") {
  FakeLlmConfig cfg;
  cfg.output_tokens = 6;
  FakeLlmServer server(cfg);
  const int port = server.start(0);
  const std::string base = "url = '" + url(port) + "', model = 'fake-model', max_tokens = 6";

  SECTION("a concurrency list is a sweep: one result per point") {
    const auto run = run_script("local rs = http_load.run{ name = 'sweep', " + base +
                                    ", concurrency = {1, 4}, requests = 12 }\n"
                                    "assert(#rs == 2 and rs[1].max_concurrency == 1 and rs[2].max_concurrency == 4)",
                                {"--allow-host", allow(port)});
    INFO(run.child.err);
    REQUIRE(run.child.exit_code == 0);
    CHECK(run.result("sweep-c1")["completed"] == 12);
    CHECK(run.result("sweep-c4")["completed"] == 12);
  }
  SECTION("chat completions, streamed and not") {
    const auto run = run_script("local a = http_load.run{ name = 'load', " + base +
                                    ", endpoint = 'chat', requests = 5 }\n"
                                    "local b = http_load.run{ name = 'whole', " + base +
                                    ", stream = false, requests = 5 }\n"
                                    "assert(a.completed == 5 and a.total_output_tokens == 30, 'chat')\n"
                                    "assert(b.completed == 5 and b.total_output_tokens == 30, 'non-streaming')\n"
                                    "assert(b.median_ttft_ms == b.median_e2el_ms, 'ttft of a whole reply')",
                                {"--allow-host", allow(port)});
    INFO(run.child.err);
    CHECK(run.child.exit_code == 0);
  }
  SECTION("500s, malformed events and disconnects are counted by kind, the rest still measured") {
    server.stop();
    cfg.error_500_fraction = 0.2;
    cfg.malformed_fraction = 0.2;
    cfg.disconnect_fraction = 0.2;
    server.set_config(cfg);
    const int faulty = server.start(0);
    const auto run = run_script("http_load.run{ name = 'load', url = '" + url(faulty) +
                                    "', model = 'fake-model', max_tokens = 6, concurrency = 8, requests = 200 }",
                                {"--allow-host", allow(faulty)});
    INFO(run.child.err);
    REQUIRE(run.child.exit_code == 0);
    const json r = run.result();
    CHECK(r["completed"].get<int>() > 50);
    CHECK(r["completed"].get<int>() + r["failed"].get<int>() == 200);
    CHECK(r["errors_by_kind"]["http_status"].get<int>() > 10);
    CHECK(r["errors_by_kind"]["malformed_sse"].get<int>() > 10);
    CHECK(r["errors_by_kind"]["reset"].get<int>() > 10);
    CHECK(r["http_statuses"]["500"].get<int>() > 10);
  }
}

namespace {

// A real nginx serving a small static file on loopback, for as long as the object lives. With
// `tls`, it speaks HTTPS (HTTP/1.1 and HTTP/2 by ALPN) with a certificate for 127.0.0.1 made
// here by openssl, and logs each request's protocol to access.log.
struct Nginx {
  std::string dir = runara::test::temp_dir("nginx");
  int port = runara::test::unused_loopback_port();
  explicit Nginx(bool tls = false) {
    REQUIRE(access("/usr/sbin/nginx", X_OK) == 0);  // CI installs nginx-light (./setup)
    runara::test::write_temp_file(dir, "hello.txt", "hello from nginx\n");
    std::string listen = "listen 127.0.0.1:" + std::to_string(port) + ";";
    std::string log = "access_log off;";
    if (tls) {
      const std::string make_cert = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650"
                                    " -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " + dir +
                                    "/key.pem -out " + dir + "/cert.pem 2>" + dir + "/openssl.err";
      INFO(read_all(dir + "/openssl.err"));
      REQUIRE(std::system(make_cert.c_str()) == 0);  // ./setup installs openssl
      listen = "listen 127.0.0.1:" + std::to_string(port) + " ssl http2; ssl_certificate " + dir +
               "/cert.pem; ssl_certificate_key " + dir + "/key.pem;";
      log = "log_format proto '$server_protocol'; access_log " + dir + "/access.log proto;";
    }
    runara::test::write_temp_file(dir, "nginx.conf",
                                  "worker_processes 1; daemon on; pid " + dir + "/nginx.pid; error_log " + dir +
                                      "/error.log;\nevents { worker_connections 1024; }\nhttp { " + log +
                                      " client_body_temp_path " + dir + "; proxy_temp_path " + dir +
                                      "; fastcgi_temp_path " + dir + "; uwsgi_temp_path " + dir + "; scgi_temp_path " + dir +
                                      ";\n server { " + listen + " root " + dir + "; } }\n");
    const int rc = std::system(("/usr/sbin/nginx -q -c " + dir + "/nginx.conf -p " + dir + " 2>" + dir + "/start.err").c_str());
    INFO(read_all(dir + "/start.err"));
    REQUIRE(rc == 0);
  }
  ~Nginx() {
    (void)std::system(("/usr/sbin/nginx -q -c " + dir + "/nginx.conf -p " + dir + " -s quit 2>/dev/null").c_str());
  }
  // How many requests access.log shows with this protocol ("HTTP/1.1", "HTTP/2.0").
  size_t logged(const std::string& protocol) const {
    std::ifstream in(dir + "/access.log");
    size_t n = 0;
    for (std::string line; std::getline(in, line);) n += line == protocol;
    return n;
  }
};

}  // namespace

TEST_CASE("http_load drives a real nginx: GET, HEAD, and a 404 on every request is an error", "[http_load]") {
  Nginx nginx;
  const std::string grant = allow(nginx.port);
  SECTION("keep-alive GET") {
    const auto run = run_script("http_load.run{ name = 'load', url = '" + url(nginx.port) +
                                    "/hello.txt', concurrency = 16, requests = 3000 }",
                                {"--allow-host", grant});
    INFO(run.child.err);
    REQUIRE(run.child.exit_code == 0);
    const json r = run.result();
    CHECK(r["completed"] == 3000);
    CHECK(r["failed"] == 0);
    CHECK(r["http_statuses"]["200"] == 3000);
    CHECK(r["backend"] == "http");
    CHECK(r["median_e2el_ms"].get<double>() > 0);
  }
  SECTION("HEAD, templated POST bodies to a URL that refuses them") {
    const auto run = run_script("local r = http_load.run{ name = 'load', url = '" + url(nginx.port) +
                                    "/hello.txt', method = 'HEAD', requests = 50 }\n"
                                    "assert(r.completed == 50, 'HEAD')\n"
                                    "http_load.run{ name = 'post', url = '" + url(nginx.port) +
                                    "/hello.txt', method = 'POST', body = '{\"n\": {{index}}}', requests = 10 }",
                                {"--allow-host", grant});
    CHECK(run.child.exit_code == 1);
    CHECK(run.child.err.find("every request failed (10 of 10; http_status): HTTP 405") != std::string::npos);
    CHECK(run.result("post")["http_statuses"]["405"] == 10);  // results kept
  }
  SECTION("an OpenAI load against a server that is not one") {
    const auto run = run_script("http_load.run{ name = 'load', url = '" + url(nginx.port) +
                                    "', model = 'm', requests = 5 }",
                                {"--allow-host", grant});
    CHECK(run.child.exit_code == 1);
    CHECK(run.child.err.find("HTTP 404") != std::string::npos);
    CHECK(run.child.err.find(".lua:1:") != std::string::npos);  // located at the script line
  }
}

TEST_CASE("http_load over HTTPS to a real nginx: HTTP/1.1 and HTTP/2, trusting a given CA file only", "[http_load]") {
  Nginx nginx(/*tls=*/true);
  const std::string grant = allow(nginx.port);
  const std::string https = "https://127.0.0.1:" + std::to_string(nginx.port) + "/hello.txt";
  SECTION("with ca_file: keep-alive GETs over TLS, then the same over HTTP/2") {
    const auto run = run_script("local a = http_load.run{ name = 'h1', url = '" + https + "', ca_file = '" + nginx.dir +
                                    "/cert.pem', concurrency = 4, requests = 200 }\n"
                                    "local b = http_load.run{ name = 'h2', url = '" + https + "', ca_file = '" + nginx.dir +
                                    "/cert.pem', http2 = true, concurrency = 8, requests = 200 }\n"
                                    "print(a.completed, b.completed)",
                                {"--allow-host", grant, "--allow-read", nginx.dir});
    INFO(run.child.err);
    REQUIRE(run.child.exit_code == 0);
    CHECK(run.result("h1")["http_statuses"]["200"] == 200);
    CHECK(run.result("h2")["http_statuses"]["200"] == 200);
    CHECK(run.result("h2")["options"]["http2"] == true);
    CHECK(nginx.logged("HTTP/1.1") == 200);
    CHECK(nginx.logged("HTTP/2.0") == 200);
  }
  SECTION("without ca_file the self-signed certificate is refused: a connect error naming it") {
    const auto run = run_script("http_load.run{ name = 'load', url = '" + https + "', requests = 3 }", {"--allow-host", grant});
    CHECK(run.child.exit_code == 1);
    CHECK(run.child.err.find("every request failed (3 of 3; connect)") != std::string::npos);
    CHECK(run.child.err.find("self-signed certificate") != std::string::npos);
    CHECK(nginx.logged("HTTP/1.1") == 0);
  }
  SECTION("ca_file is checked: https only, and a file the run may read") {
    auto run = run_script("http_load.run{ url = '" + url(nginx.port) + "', ca_file = 'x.pem', requests = 1 }", {"--allow-host", grant});
    CHECK(run.child.exit_code == 1);
    CHECK(run.child.err.find("option 'ca_file' is for https:// URLs (this one is http://)") != std::string::npos);
    run = run_script("http_load.run{ url = '" + https + "', ca_file = '" + nginx.dir + "/cert.pem', requests = 1 }", {"--allow-host", grant});
    CHECK(run.child.exit_code == 1);
    CHECK(run.child.err.find("http_load.run: ca_file: ") != std::string::npos);
  }
}

// libcurl (7.88) retries a request whose reused connection died unanswered, up to 5 times, but
// counts those retries over an easy handle's whole life, not per request: a slot that met 6
// such closes in all failed its next one ("Connection died, tried 5 times before giving up"),
// which is how HTTP/2 servers retiring connections with GOAWAY made loads fail now and then.
TEST_CASE("http_load over HTTPS: a server closing reused connections unanswered costs retries and never requests", "[http_load]") {
  const std::string dir = runara::test::temp_dir("tls-closing");
  const std::string make_cert = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650"
                                " -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " + dir +
                                "/key.pem -out " + dir + "/cert.pem 2>" + dir + "/openssl.err";
  INFO(read_all(dir + "/openssl.err"));
  REQUIRE(std::system(make_cert.c_str()) == 0);  // ./setup installs openssl
  runara::test::TlsClosingServer server(dir + "/cert.pem", dir + "/key.pem");
  const std::string https = "https://127.0.0.1:" + std::to_string(server.port()) + "/";
  const auto run = run_script("local r = http_load.run{ name = 'load', url = '" + https + "', ca_file = '" + dir +
                                  "/cert.pem', concurrency = 1, requests = 30 }\nprint(r.completed, r.failed)",
                              {"--allow-host", allow(server.port()), "--allow-read", dir});
  INFO(run.child.out << run.child.err);
  REQUIRE(run.child.exit_code == 0);
  CHECK(run.result("load")["completed"] == 30);
  CHECK(run.result("load")["failed"] == 0);
  CHECK(server.answered() == 30);
  // Every request after the first went out on a kept-alive connection and met a close: far more
  // than 5 on the one slot, so a per-handle retry count would have failed some.
  CHECK(server.dropped() >= 20);
}

TEST_CASE("http_load refuses targets the run may not reach, and bad options, with clear errors", "[http_load]") {
  FakeLlmServer server(FakeLlmConfig{});
  const int port = server.start(0);
  SECTION("loopback without a grant: refused before anything is sent") {
    const auto run = run_script("http_load.run{ url = '" + url(port) + "', model = 'm', requests = 5 }");
    CHECK(run.child.exit_code == 1);
    CHECK(run.child.err.find("refusing to connect to 127.0.0.1:" + std::to_string(port) + " (loopback)") != std::string::npos);
    CHECK(run.child.err.find("--allow-host 127.0.0.1:" + std::to_string(port)) != std::string::npos);
    CHECK(server.stats().requests_served == 0);
  }
  SECTION("a name that resolves to loopback is refused at connect time") {
    const auto run = run_script("http_load.run{ name = 'load', url = 'http://localhost:" + std::to_string(port) +
                                "', model = 'm', requests = 5 }");
    CHECK(run.child.exit_code == 1);
    CHECK(run.child.err.find("refused_target") != std::string::npos);
    CHECK(run.child.err.find("127.0.0.1, loopback)") != std::string::npos);
    CHECK(server.stats().requests_served == 0);
  }
  SECTION("the metadata address and LAN addresses") {
    for (const std::string target : {"http://169.254.169.254/latest/meta-data/", "http://192.168.1.1/", "http://10.0.0.5:8000"}) {
      const auto run = run_script("http_load.run{ url = '" + target + "', requests = 1 }");
      INFO(target << "\n" << run.child.err);
      CHECK(run.child.exit_code == 1);
      CHECK(run.child.err.find("refusing to connect") != std::string::npos);
    }
  }
  SECTION("an address nothing listens on") {
    const int closed = runara::test::unused_loopback_port();
    const auto run = run_script("http_load.run{ name = 'load', url = '" + url(closed) + "/x', requests = 3 }",
                                {"--allow-host", allow(closed)});
    CHECK(run.child.exit_code == 1);
    CHECK(run.child.err.find("every request failed (3 of 3; connect)") != std::string::npos);
    CHECK(run.result()["errors_by_kind"]["connect"] == 3);
  }
  SECTION("invalid options") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"url = 'file:///etc/passwd', requests = 1", "option 'url' must be an http:// or https:// URL, got 'file:///etc/passwd'"},
        {"url = 'gopher://x/', requests = 1", "must be an http:// or https:// URL"},
        {"requests = 1", "option 'url' is required"},
        {"url = 'http://127.0.0.1:1', concurency = 3, requests = 1", "concurency"},
        {"url = 'http://127.0.0.1:1', concurrency = 0, requests = 1", "option 'concurrency' must be an integer number > 0"},
        {"url = 'http://127.0.0.1:1', concurrency = 2, rate = 3, requests = 1", "either 'concurrency' (closed loop) or 'rate'"},
        {"url = 'http://127.0.0.1:1'", "requests = N or duration = seconds"},
        {"url = 'http://127.0.0.1:1', mode = 'openai', requests = 1", "option 'model' is required in openai mode"},
        {"url = 'http://127.0.0.1:1', rate = 5, arrival = 'bursty', requests = 1", "option 'arrival' must be \"poisson\", \"gamma\" or \"constant\""},
        {"url = 'http://127.0.0.1:1', model = 'm', prompts = { input_tokens = 8, range_ratio = 1.5 }, requests = 1", "prompts.range_ratio must be >= 0 and < 1"},
        {"url = 'http://127.0.0.1:1', name = '../x', requests = 1", "option 'name' names a folder"},
        {"url = 'http://127.0.0.1:1', model = 'm', endpoint = 'embeddings', requests = 1", "option 'endpoint' must be \"completions\" or \"chat\""},
        {"url = 'http://127.0.0.1:1', method = 'get', requests = 1", "upper-case HTTP method"},
        {"url = 'http://127.0.0.1:1', headers = { ['X-A'] = 'b\\r\\nX-Evil: 1' }, requests = 1", "holds a line break"},
        {"url = 'http://127.0.0.1:1', concurrency = 2, max_concurrency = 3, requests = 1", "'max_concurrency' caps an open loop"},
        {"url = 'http://127.0.0.1:1', http2 = true, requests = 1", "needs libcurl 8.0 or later"},
        {"url = 'http://127.0.0.1:1', model = 'm', prompts = { file = '/etc/passwd' }, requests = 1", "prompts.file: reading '/etc/passwd' is not allowed"},
        {"url = 'http://127.0.0.1:1', metadata = 'tp=1', requests = 1", "option 'metadata' must be a table"},
        {"url = 'http://127.0.0.1:1', metadata = { tp = 1 }, requests = 1", "metadata key 'tp' must have a string value, got number"},
        {"url = 'http://127.0.0.1:1', metadata = { completed = '9' }, requests = 1", "metadata key 'completed' is a key runara writes itself"},
        {"url = 'http://127.0.0.1:1', metadata = { p99_ttft_ms = '1' }, requests = 1", "metadata key 'p99_ttft_ms' is a key runara writes itself"},
        {"url = 'http://127.0.0.1:1', metadata = { note = string.rep('x', 1025) }, requests = 1", "metadata key 'note' has a value of 1025 bytes; at most 1024"},
        {"url = 'http://127.0.0.1:1', metadata = (function() local m = {} for i = 1, 65 do m['k' .. i] = 'v' end return m end)(), requests = 1",
         "metadata holds 65 keys; at most 64"},
    };
    for (const auto& [options, message] : cases) {
      const auto run = run_script("http_load.run{ " + options + " }", {"--allow-host", "127.0.0.1:1"});
      INFO(options << "\n" << run.child.err);
      CHECK(run.child.exit_code == 1);
      CHECK(run.child.err.find("http_load.run: ") != std::string::npos);
      CHECK(run.child.err.find(message) != std::string::npos);
    }
  }
}

TEST_CASE("http_load: a prompt file, a secret API key that never shows, and Ctrl-C keeps partial results", "[http_load]") {
  FakeLlmConfig cfg;
  cfg.itl_ms = 20;
  cfg.output_tokens = 50;
  FakeLlmServer server(cfg);
  const int port = server.start(0);
  SECTION("prompts from a JSONL file, key from a secret") {
    const std::string dir = runara::test::temp_dir("prompts");
    runara::test::write_temp_file(dir, "p.jsonl", "{\"prompt\": \"one two three\"}\n{\"prompt\": \"four\"}\n");
    const auto run = run_script("local r = http_load.run{ name = 'load', url = '" + url(port) +
                                    "', model = 'fake-model', max_tokens = 2, requests = 6, prompts = { file = '" + dir +
                                    "/p.jsonl' }, api_key = runara.secret('TEST_KEY'), quiet = true }\nprint(r.completed)",
                                {"--allow-host", allow(port), "--allow-read", dir, "--secret", "TEST_KEY@" + allow(port)},
                                {{"TEST_KEY", "sk-test-secret"}});
    INFO(run.child.err);
    CHECK(run.child.exit_code == 0);
    CHECK(run.child.out == "6\n");
    CHECK(run.result()["options"]["prompts"]["format"] == "auto");
    CHECK(read_all(run.out + "/load/results.json").find("sk-test-secret") == std::string::npos);
  }
  SECTION("SIGINT in the middle of a load: exit 130, what was measured is written") {
    const std::string dir = runara::test::temp_dir("interrupt");
    const std::string script = runara::test::write_temp_file(
        dir, "long.lua", "http_load.run{ name = 'load', url = '" + url(port) + "', model = 'fake-model', max_tokens = 50, concurrency = 4, duration = 60 }");
    runara::test::ChildProcess child({RUNARA_BINARY, "--out", dir + "/out", "--allow-host", allow(port), script});
    REQUIRE(child.wait_for_output("starting", 10));
    usleep(2'500'000);  // two rounds of 1 s requests
    child.signal(SIGINT);
    const auto result = child.wait(15);
    CHECK(result.exit_code == 130);
    const json r = json::parse(read_all(dir + "/out/load/results.json"));
    CHECK(r["interrupted"] == true);
    CHECK(r["completed"].get<int>() >= 4);
    CHECK(r["abandoned"].get<int>() > 0);
  }
}

TEST_CASE("http_load may aim at the run's own droplet without a grant", "[http_load]") {
  runara::sim::FakeDigitalOcean fake(runara::sim::FakeDoConfig{});
  fake.start(0);
  const std::string dir = runara::test::temp_dir("droplet-target");
  // The fake cloud hands out TEST-NET addresses where no server of ours listens: the load must get
  // as far as the network (whatever answers or not there), not be refused by the target policy.
  const auto run = run_script(
      "local d = droplet.create{ size = 's-1vcpu-1gb', image = 'ubuntu-24-04-x64', region = 'nyc3' }\n"
      "local ok, err = pcall(http_load.run, { name = 'load', url = 'http://' .. d.ip .. ':8000/', requests = 1, timeout = 1, quiet = true })\n"
      "print(ok, err)\n"
      "local ok2, err2 = pcall(http_load.run, { url = 'http://203.0.113.250:8000/', requests = 1, timeout = 1 })\n"
      "print(ok2, err2)",
      {}, {{"RUNARA_DO_API_URL", fake.base_url()}, {"DIGITALOCEAN_TOKEN", "test-token"}, {"DIGITALOCEAN_ACCESS_TOKEN", ""},
           {"XDG_CONFIG_HOME", ""}, {"RUNARA_STATE_DIR", dir + "/state"}, {"RUNARA_POLL_S", "0.1"}, {"HOME", dir}});
  INFO(run.child.out << run.child.err);
  REQUIRE(run.child.exit_code == 0);
  const std::string first = run.child.out.substr(0, run.child.out.find('\n'));
  CHECK(first.find("false\thttp_load.run: every request failed (1 of 1; ") == 0);
  CHECK(first.find("refus") == std::string::npos);
  CHECK(run.child.out.find("refusing to connect to 203.0.113.250:8000 (public internet)") != std::string::npos);
  CHECK(fake.live_droplets() == 0);
}

namespace {

// A granted server that echoes each request's headers back (a script reading the answer would
// read any secret sent to it).
struct EchoServer : runara_test::LocalServer {
  EchoServer() {
    srv.Get("/echo", [](const httplib::Request& req, httplib::Response& res) {
      std::string dump;
      for (const auto& [name, value] : req.headers) dump += name + ": " + value + "\n";
      res.set_content(dump, "text/plain");
    });
    // A completions server that streams the Authorization header back as the reply's text, or
    // (with ?fail, every other request: a load whose every request fails returns no table) puts
    // it in an HTTP 500's body: server text that save_detailed keeps.
    srv.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string header = req.get_header_value("Authorization");
      if (req.has_param("fail") && completions++ % 2 == 1) {
        return res.set_content("echo: " + header, "text/plain"), void(res.status = 500);
      }
      const json chunk = {{"id", "cmpl-echo"}, {"object", "text_completion"}, {"model", "echo"},
                          {"choices", {{{"index", 0}, {"text", header}, {"finish_reason", nullptr}}}}};
      res.set_content("data: " + chunk.dump() + "\n\ndata: [DONE]\n\n", "text/event-stream");
    });
    start();
  }
  std::atomic<int> completions{0};
  bool saw(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu);
    return std::any_of(auth.begin(), auth.end(), [&](const std::string& a) { return a.find(text) != std::string::npos; });
  }
};

}  // namespace

TEST_CASE("http_load: a secret goes only where it is bound, and never to an echoing granted server", "[http_load]") {
  EchoServer echo;
  const std::string key = "sk-echo-secret-7f3a";
  const std::string p = std::to_string(echo.port);
  const std::map<std::string, std::string> env = {{"K", key}};
  SECTION("granted with --allow-host, but the secret is not bound to it: refused before anything is sent") {
    for (const std::string option : {"api_key = runara.secret('K')", "headers = { ['X-Key'] = runara.secret('K') }"}) {
      const auto run = run_script("http_load.run{ name = 'load', url = 'http://127.0.0.1:" + p + "/echo', requests = 2, " +
                                      option + " }",
                                  {"--allow-host", allow(echo.port), "--secret", "K"}, env);
      INFO(option << "\n" << run.child.err);
      CHECK(run.child.exit_code == 1);
      CHECK(run.child.err.find("refusing to send secret K to 127.0.0.1:" + p) != std::string::npos);
      CHECK(run.child.err.find("run with --secret K@127.0.0.1:" + p) != std::string::npos);
      CHECK(run.child.err.find(key) == std::string::npos);
    }
    CHECK(echo.requests().empty());
  }
  SECTION("reached by a name, the secret is refused at connect time") {
    const auto run = run_script("http_load.run{ name = 'load', url = 'http://localhost:" + p +
                                    "/echo', requests = 2, api_key = runara.secret('K') }",
                                {"--allow-host", "localhost:" + p, "--secret", "K"}, env);
    INFO(run.child.err);
    CHECK(run.child.exit_code == 1);
    CHECK(run.child.err.find("refused_target") != std::string::npos);
    CHECK(echo.requests().empty());
    CHECK_FALSE(echo.saw(key));
  }
  SECTION("bound with --secret K@127.0.0.1:PORT, it is sent") {
    const auto run = run_script("local r = http_load.run{ name = 'load', url = 'http://127.0.0.1:" + p +
                                    "/echo', requests = 2, api_key = runara.secret('K'), quiet = true }\nprint(r.completed)",
                                {"--allow-host", allow(echo.port), "--secret", "K@127.0.0.1:" + p}, env);
    INFO(run.child.err);
    CHECK(run.child.exit_code == 0);
    CHECK(run.child.out == "2\n");
    CHECK(echo.saw("Bearer " + key));
  }
  SECTION("bound, a server that echoes it into its replies: save_detailed's texts and errors come back masked") {
    for (const std::string query : {"", "?fail"}) {
      const auto run = run_script("local r = http_load.run{ name = 'load', url = 'http://127.0.0.1:" + p +
                                      "/v1/completions" + query + "', model = 'echo', requests = 2, max_tokens = 4, "
                                      "save_detailed = true, api_key = runara.secret('K'), quiet = true }\n"
                                      "print(r.generated_texts[1] .. '|' .. r.errors[1] .. '|' .. r.generated_texts[2] .. '|' .. r.errors[2])",
                                  {"--allow-host", allow(echo.port), "--secret", "K@127.0.0.1:" + p}, env);
      INFO(query << "\n" << run.child.out << run.child.err);
      CHECK(run.child.exit_code == 0);
      CHECK(echo.saw("Bearer " + key));
      CHECK(run.child.out.find("Bearer ") != std::string::npos);  // the echo came back...
      CHECK(run.child.out.find(key) == std::string::npos);        // ...masked
      if (!query.empty()) CHECK(run.child.out.find("echo: Bearer ") != std::string::npos);  // in errors too
    }
  }
  SECTION("the run's own simulated server gets it without any binding") {
    const auto run = run_script("local s = http_load.fake_server{ ttft_ms = 1, itl_ms = 1 }\n"
                                "local r = http_load.run{ name = 'load', url = s.url, model = s.model, requests = 2, "
                                "max_tokens = 2, api_key = runara.secret('K'), quiet = true }\nprint(r.completed)",
                                {"--secret", "K"}, env);
    INFO(run.child.err);
    CHECK(run.child.exit_code == 0);
    CHECK(run.child.out == "2\n");
  }
  SECTION("a malformed --secret destination is a usage error") {
    const auto run = run_script("print(1)", {"--secret", "K@127.0.0.1:0"}, env);
    CHECK(run.child.exit_code == 2);
    CHECK(run.child.err.find("--secret K@127.0.0.1:0: '127.0.0.1:0' is not a destination") != std::string::npos);
  }
}

TEST_CASE("http_load: URLs without a scheme and headers that would smuggle requests are refused", "[http_load]") {
  EchoServer echo;
  const std::string p = std::to_string(echo.port);
  SECTION("no scheme: libcurl would guess one, and the port with it") {
    for (const std::string& u : {"127.0.0.1:" + p + "/echo", "localhost:" + p + "/echo", "http:/127.0.0.1:" + p + "/echo"}) {
      const auto run = run_script("http_load.run{ name = 'load', url = '" + u + "', requests = 1 }",
                                  {"--allow-host", allow(echo.port), "--allow-host", "localhost:" + p});
      INFO(u << "\n" << run.child.err);
      CHECK(run.child.exit_code == 1);
      CHECK(run.child.err.find("http_load.run: option 'url' ") != std::string::npos);
      CHECK(run.child.err.find(u) != std::string::npos);
    }
  }
  SECTION("Host, Content-Length, Transfer-Encoding and Connection, in any case") {
    for (const std::string h : {"Host", "content-length", "Transfer-Encoding", "CONNECTION"}) {
      const auto run = run_script("http_load.run{ name = 'load', url = 'http://127.0.0.1:" + p + "/echo', requests = 1, "
                                  "headers = { ['" + h + "'] = 'x' } }",
                                  {"--allow-host", allow(echo.port)});
      INFO(h << "\n" << run.child.err);
      CHECK(run.child.exit_code == 1);
      CHECK(run.child.err.find("http_load.run: header '" + h + "' may not be set by a script") != std::string::npos);
    }
  }
  CHECK(echo.requests().empty());
}

TEST_CASE("http_load: ShareGPT prompts get their reply's length as max_tokens unless max_tokens is set", "[http_load]") {
  FakeLlmConfig cfg;
  cfg.output_tokens = 1000;  // more than any max_tokens: each request gets what it asked for
  FakeLlmServer server(cfg);
  const int port = server.start(0);
  const std::string data = std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/sharegpt/small.json";
  const auto run = [&](const std::string& max_tokens) {
    return run_script("http_load.run{ name = 'load', url = '" + url(port) + "', model = 'fake-model', requests = 12, " + max_tokens +
                          "prompts = { file = '" + data + "', format = 'sharegpt' }, quiet = true }",
                      {"--allow-host", allow(port), "--allow-read", data});
  };
  SECTION("max_tokens unset: each request asks for its conversation's reply length (20 or 30 tokens)") {
    const auto r = run("");
    INFO(r.child.err);
    REQUIRE(r.child.exit_code == 0);
    const auto lens = r.result()["output_lens"].get<std::vector<int>>();
    REQUIRE(lens.size() == 12);
    CHECK(std::count(lens.begin(), lens.end(), 20) + std::count(lens.begin(), lens.end(), 30) == 12);
    CHECK(std::count(lens.begin(), lens.end(), 20) > 0);
    CHECK(std::count(lens.begin(), lens.end(), 30) > 0);
    CHECK(r.result()["options"]["max_tokens_from"] == "sharegpt replies");
    CHECK(r.result()["options"]["prompts"]["sharegpt_pairs"] == json{{"kept", 2}, {"dropped", 3}});
  }
  SECTION("max_tokens set: every request asks for it") {
    const auto r = run("max_tokens = 9, ");
    INFO(r.child.err);
    REQUIRE(r.child.exit_code == 0);
    CHECK(r.result()["output_lens"].get<std::vector<int>>() == std::vector<int>(12, 9));
    CHECK(r.result()["options"]["max_tokens"] == 9);
    CHECK_FALSE(r.result()["options"].contains("max_tokens_from"));
    CHECK(r.result()["options"]["prompts"]["sharegpt_pairs"] == json{{"kept", 4}, {"dropped", 1}});
  }
}
