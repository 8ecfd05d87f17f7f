// Issue 25, item 4, end to end: C++ buffers that a remote side can grow stay bounded under
// --max-memory 64M, measured as the runara child's peak RSS, and each bound fails with a clear
// error (or, where the run's own memory is what runs out, the memory-limit ending). The hostile
// sides are a cpp-httplib server in this process (SSE, /metrics, DigitalOcean's API), GPU tool
// shims on PATH (amd-smi, nvidia-smi), and a script keeping results.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "gpu_shims.hpp"
#include "loopback_fixtures.hpp"

using runara::test::ChildResult;

namespace {

constexpr long kCapMiB = 64;
// Beyond the cap and what runara takes with nothing asked of it (baseline_mib()): room for Lua
// strings and the socket buffers in flight.
constexpr long kSlackMiB = 32;

ChildResult run_script(const std::string& body, std::vector<std::string> flags, double timeout_s = 60,
                       std::map<std::string, std::string> env = {}) {
  static int n = 0;
  const std::string dir = runara::test::temp_dir("hostile");
  const std::string script = runara::test::write_temp_file(dir, "h" + std::to_string(++n) + ".lua", body);
  flags.insert(flags.begin(), {"--out", dir + "/out", "--max-memory", std::to_string(kCapMiB) + "M"});
  flags.push_back(script);
  // Under AddressSanitizer freed blocks wait in a quarantine (256 MiB by default) before reuse,
  // and peak RSS would count them as the run's: what is measured here is what runara keeps.
  // (Ignored by the normal build.)
  const char* asan = std::getenv("ASAN_OPTIONS");
  env.emplace("ASAN_OPTIONS", std::string(asan && *asan ? std::string(asan) + ":" : "") + "quarantine_size_mb=0");
  return runara::test::run_runara(flags, timeout_s, env);
}

// Peak RSS of a run that only starts a fake server. ru_maxrss of a child started with
// posix_spawn also counts this test process's own high-water mark at the spawn, so it is taken
// again right before each attack (under AddressSanitizer, after other tests, that floor is
// hundreds of MiB and grows).
long baseline_mib() {
  const ChildResult r = run_script("local s = http_load.fake_server{} print(s.url)", {});
  REQUIRE(r.exit_code == 0);
  return r.max_rss_kb / 1024;
}

// Streams what a hostile server would, until the client goes away (or `most` bytes).
struct HostileServer : runara_test::LocalServer {
  std::atomic<std::size_t> sent{0};

  HostileServer() : runara_test::LocalServer(true) {
    // One SSE event that never ends: "data: xxxx..." up to 1 GiB.
    srv.Post("/huge", [this](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/event-stream", [this](std::size_t offset, httplib::DataSink& sink) {
        static const std::string piece(256 * 1024, 'x');
        if (offset == 0) return sink.write("data: ", 6);
        if (offset > (std::size_t{1} << 30)) return false;
        sent += piece.size();
        return sink.write(piece.data(), piece.size());
      });
    });
    // Token events that never end (a first one, then 1024 per write), up to 4 GiB.
    srv.Post("/endless", [this](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/event-stream", [this](std::size_t offset, httplib::DataSink& sink) {
        static const std::string chunk = [] {
          std::string c;
          for (int i = 0; i < 1024; ++i) c += "data: {\"choices\":[{\"text\":\"t\"}]}\n\n";
          return c;
        }();
        if (offset > (std::size_t{4} << 30)) return false;
        sent += chunk.size();
        return sink.write(chunk.data(), chunk.size());
      });
    });
    // /metrics of 4 MiB, made as it is sent (a 16 MiB string here would count in the child's
    // ru_maxrss; not text/plain, which cpp-httplib would gzip, slowly): a family per line (TYPE
    // lines), samples of 1000 labels each, short samples.
    const auto metrics = [this](const char* path, std::string (*line)(std::size_t)) {
      srv.Get(path, [this, line](const httplib::Request&, httplib::Response& res) {
        res.set_chunked_content_provider("application/octet-stream", [this, line](std::size_t offset, httplib::DataSink& sink) {
          if (offset >= (std::size_t{4} << 20) - (128 << 10)) {  // just under 4 MiB: the body cap
            sink.done();
            return true;
          }
          std::string chunk;
          for (std::size_t i = offset; chunk.size() < 65536; ++i) chunk += line(i);
          sent += chunk.size();
          return sink.write(chunk.data(), chunk.size());
        });
      });
    };
    metrics("/families", [](std::size_t i) { return "# TYPE f" + std::to_string(i) + " counter\n"; });
    metrics("/labels", [](std::size_t i) {
      std::string l = "m" + std::to_string(i) + "{";
      for (int k = 0; k < 1000; ++k) l += "l" + std::to_string(k) + "=\"\",";
      return l + "} 1\n";
    });
    metrics("/samples", [](std::size_t i) { return "m{a=\"" + std::to_string(i) + "\"} 1\n"; });
    // 30,000 distinct metric names, each scrape (within the parser's bounds): a sampler's samples
    // grow by that many map entries every interval.
    srv.Get("/names", [](const httplib::Request&, httplib::Response& res) {
      static const std::string body = [] {
        std::string b;
        for (int i = 0; i < 30000; ++i) b += "vllm:a_rather_long_metric_name_number_" + std::to_string(100000 + i) + " 1\n";
        return b;
      }();
      res.set_content(body, "application/octet-stream");
    });
    srv.Get("/big", [this](const httplib::Request&, httplib::Response& res) {  // 16 MiB of one comment line
      res.set_chunked_content_provider("application/octet-stream", [this](std::size_t offset, httplib::DataSink& sink) {
        static const std::string piece = "#" + std::string(65535, 'c');
        if (offset >= (std::size_t{16} << 20)) {
          sink.done();
          return true;
        }
        sent += piece.size();
        return sink.write(piece.data(), piece.size());
      });
    });
    // DigitalOcean's API: an account, then /v2/sizes answering 1 GiB of one list (/huge-do) or
    // 3.9 MiB of small numbers, about 60 MiB once parsed (/dense-do).
    srv.Get("/v2/account", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"account\": {\"droplet_limit\": 25, \"status\": \"active\", \"uuid\": \"u\"}}", "application/octet-stream");
    });
    srv.Get("/v2/sizes", [this](const httplib::Request&, httplib::Response& res) {
      const bool huge = do_huge;
      res.set_chunked_content_provider("application/octet-stream", [this, huge](std::size_t offset, httplib::DataSink& sink) {
        static const std::string piece = [] {
          std::string p;
          while (p.size() < 65536) p += "0,";
          return p;
        }();
        if (offset == 0) return sink.write("{\"sizes\": [", 11);
        if (offset > (huge ? std::size_t{1} << 30 : (std::size_t{39} << 20) / 10)) {
          sink.write("0]}", 3);
          sink.done();
          return true;
        }
        sent += piece.size();
        return sink.write(piece.data(), piece.size());
      });
    });
    start();
  }
  std::atomic<bool> do_huge{false};
  std::string base(const std::string& path) const { return url(path); }
  std::string grant() const { return "127.0.0.1:" + std::to_string(port); }
};

}  // namespace

TEST_CASE("a hostile LLM server cannot grow runara past --max-memory: one huge SSE event, endless tokens",
          "[hostile_buffers][http_load]") {
  HostileServer server;
  struct Attack {
    const char* name;
    std::string path, error;
  };
  const std::vector<Attack> attacks = {
      {"one SSE event of 1 GiB", "/huge",
       "malformed_sse): malformed_sse: an SSE event larger than 1 MiB (the limit on one event); the rest of the response "
       "was not read"},
      {"endless token events", "/endless",
       "(1 of 1; other): more than 1048576 token events in one response (the limit per response); the rest was not read"},
  };
  for (const auto& a : attacks) {
    DYNAMIC_SECTION(a.name) {
      const long baseline = baseline_mib();
      server.sent = 0;
      const ChildResult r = run_script("local ok, err = pcall(http_load.run, { name = 'load', url = '" + server.base(a.path) +
                                           "', model = 'm', requests = 1, quiet = true })\nprint(ok, err)",
                                       {"--allow-host", server.grant()}, 120);
      const long peak_mib = r.max_rss_kb / 1024;
      WARN(a.name << ": peak RSS " << peak_mib << " MiB with --max-memory " << kCapMiB << "M (" << baseline
                  << " MiB doing nothing), " << (server.sent >> 20) << " MiB sent, exit " << r.exit_code << " after "
                  << r.seconds << " s");
      INFO("stdout: " << r.out << "\nstderr: " << r.err);
      CHECK(r.exit_code == 0);
      CHECK(r.out.find("false\thttp_load.run: every request failed") == 0);
      CHECK(r.out.find(a.error) != std::string::npos);
      CHECK(server.sent < (std::size_t{256} << 20));  // stopped reading at the bound, not at the server's end
      CHECK(peak_mib < baseline + kCapMiB + kSlackMiB);
    }
  }
}

TEST_CASE("a hostile /metrics cannot grow runara past --max-memory: 16 MiB of families, labels or samples",
          "[hostile_buffers][metrics]") {
  HostileServer server;
  const std::vector<std::pair<std::string, std::string>> attacks = {
      {"/families", ": more than 50000 metric families: \"# TYPE f"},
      {"/labels", ": the parsed samples would take more than 16 MiB ("},
      {"/samples", ": more than 50000 samples: \"m{a=\""},
      {"/big", ": response body larger than 4194304 bytes"},
  };
  for (const auto& [path, error] : attacks) {
    DYNAMIC_SECTION(path) {
      const long baseline = baseline_mib();
      const ChildResult r = run_script("local ok, err = pcall(metrics.scrape, '" + server.base(path) + "')\nprint(ok, err)",
                                       {"--allow-host", server.grant()}, 120);
      const long peak_mib = r.max_rss_kb / 1024;
      WARN(path << ": peak RSS " << peak_mib << " MiB with --max-memory " << kCapMiB << "M (" << baseline
                << " MiB doing nothing), exit " << r.exit_code << " after " << r.seconds << " s");
      INFO("stdout: " << r.out << "\nstderr: " << r.err);
      CHECK(r.exit_code == 0);
      CHECK(r.out.find("false\tmetrics.scrape: " + server.base(path) + ": ") == 0);
      CHECK(r.out.find(error) != std::string::npos);
      CHECK(peak_mib < baseline + kCapMiB + kSlackMiB);
    }
  }
}

// Issue 25: a sampler of a /metrics with 30,000 distinct names charged each name's bytes
// plus 64 (its map node and heap block cost more), and stop() made its results as one C++
// document beside Lua's, its phases a scan of every sample per mark: 712 MiB of peak RSS and
// 11 s under --max-memory 64M. Now the run ends at the budget, near the cap.
TEST_CASE("a hostile /metrics cannot grow a metrics sampler past --max-memory: many distinct names", "[hostile_buffers][metrics]") {
  HostileServer server;
  const long baseline = baseline_mib();
  const ChildResult r = run_script(R"lua(
    local s = metrics.start(")lua" + server.base("/names") + R"lua(", { interval = 0.05 })
    for i = 1, 200 do pcall(s.mark, s, "m" .. i) runara.sleep(0.01) end
    runara.sleep(2)
    local ok, r = pcall(s.stop, s)
    print("stop", ok, ok and #r.samples or r)
  )lua", {"--allow-host", server.grant()}, 120);
  const long peak_mib = r.max_rss_kb / 1024;
  WARN("/metrics of 30,000 names sampled: peak RSS " << peak_mib << " MiB with --max-memory " << kCapMiB << "M (" << baseline
                                                    << " MiB doing nothing), exit " << r.exit_code << " after " << r.seconds << " s");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK_FALSE(r.timed_out);
  const bool memory_ending = r.exit_code == 1 && r.err.find("runara: stopped: the script used more than its memory limit of 64 MiB") != std::string::npos;
  const bool refused = r.out.find("stop\tfalse\t") == 0 && r.out.find(" MiB left of the run's memory limit of 64 MiB") != std::string::npos;
  CHECK((memory_ending || refused));
  // The sampler stopped at the budget, or (on the sanitizers' slower clock) the heap got there
  // first: either way the run ended at the cap.
  CHECK((r.err.find(": metrics samples needs about ") != std::string::npos || memory_ending));
  CHECK(peak_mib < baseline + kCapMiB + kSlackMiB);
}

TEST_CASE("a hostile GPU tool cannot grow runara past --max-memory, nor hold up stop()", "[hostile_buffers][gpu_metrics]") {
  const long baseline = baseline_mib();  // each section runs the test case again, so this too
  gpu_test::ShimDir shims;
  const std::string fixtures = std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/gpu/amd-smi/";
  // amd-smi answers `static` truthfully; `metric` as the section says (awk: fast, no quoting).
  const auto amd = [&](const std::string& metric_awk) {
    shims.add("amd-smi", "case \"$1\" in\nstatic) cat '" + fixtures + "radeon-rx6600-amdsmi-list-shape-static.json';;\n"
                         "*) exec awk '" + metric_awk + "';;\nesac");
  };
  const std::string read = "local ok, err = pcall(gpu_metrics.read, gpu_metrics.localhost(), { backend = 'amd-smi' })\n"
                           "print(ok, err)";
  SECTION("8 MiB of amd-smi JSON") {
    amd("BEGIN { print \"[\"; for (i = 0; i < 1000000; i++) print \"{\\\"gpu\\\": 0},\"; print \"{}]\" }");
    const ChildResult r = run_script(read, {}, 60, {{"PATH", shims.path()}});
    WARN("8 MiB of amd-smi JSON: peak RSS " << r.max_rss_kb / 1024 << " MiB (" << baseline << " doing nothing), "
                                            << r.seconds << " s");
    INFO(r.out << r.err);
    CHECK(r.out == "false\tgpu_metrics.read: amd-smi on local: more than 2097152 bytes of output\n");
    CHECK(r.max_rss_kb / 1024 < baseline + kCapMiB + kSlackMiB);
  }
  SECTION("2 MiB of amd-smi JSON that would be large once parsed") {
    amd("BEGIN { print \"[{\\\"gpu\\\": 0, \\\"j\\\\u0075nk\\\": [\"; for (i = 0; i < 500000; i++) print \"{},\"; "
        "print \"{}]}]\" }");
    const ChildResult r = run_script(read, {}, 60, {{"PATH", shims.path()}});
    WARN("2 MiB of amd-smi JSON: peak RSS " << r.max_rss_kb / 1024 << " MiB (" << baseline << " doing nothing), "
                                            << r.seconds << " s");
    INFO(r.out << r.err);
    CHECK_THAT(r.out, Catch::Matches("false\tgpu_metrics.read: amd-smi metric --json: would take about [0-9]+ MiB once "
                                     "parsed, more than the 16 MiB allowed\n"));
    CHECK(r.max_rss_kb / 1024 < baseline + kCapMiB + kSlackMiB);
  }
  SECTION("nvidia-smi -lms with ever new GPU indices") {
    shims.add("nvidia-smi",
              "case \"$*\" in\n*name,vbios*) echo '0, NVIDIA H100 80GB HBM3, 96.00.A5.00.01, 590.48.01, 81559, 1'; exit 0;;\nesac\n"
              "exec awk 'BEGIN { for (i = 0; ; i++) print i \", 631.95, 19818, 81559, 100, 11, 59, 54, 1980, 2619\" }'");
    const ChildResult r = run_script(R"lua(
      local s = gpu_metrics.start(gpu_metrics.localhost(), { backend = "nvidia-smi", interval = 0.05 })
      runara.sleep(0.5)
      local t0 = runara.now()
      local r = s:stop()
      print(#r.problems, r.problems[1], #r.samples, runara.now() - t0 < 0.5)
    )lua", {}, 60, {{"PATH", shims.path()}});
    WARN("nvidia-smi with ever new GPU indices: peak RSS " << r.max_rss_kb / 1024 << " MiB (" << baseline
                                                           << " doing nothing), " << r.seconds << " s");
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "1\tnvidia-smi on local: more than 64 GPUs in one reading (distinct GPU indices "
                   "without a repeat); stopped sampling\t0\ttrue\n");
    CHECK(r.seconds < 10);
    CHECK(r.max_rss_kb / 1024 < baseline + kCapMiB + kSlackMiB);
  }
  // Issue 25: a sampler whose samples filled the budget used to make its results as one C++
  // document beside Lua's (415 MiB of peak RSS under --max-memory 64M), and its phases by
  // scanning every sample once per GPU and mark (200 marks: 40 s in stop()). Now its samples,
  // marks and summaries are charged, its results go straight into Lua: the run ends with the
  // memory-limit ending, its peak RSS near the cap.
  SECTION("nvidia-smi -lms flooding 64 GPUs until the budget, with thousands of marks") {
    shims.add("nvidia-smi",
              "case \"$*\" in\n*name,vbios*) for i in $(seq 0 63); do echo \"$i, NVIDIA H100 80GB HBM3, 96.00.A5.00.01, 590.48.01, 81559, 64\"; done; exit 0;;\nesac\n"
              "exec awk 'BEGIN { for (n = 0; ; n++) for (i = 0; i < 64; i++) print i \", 631.95, 19818, 81559, 100, 11, 59, 54, 1980, 2619\" }'");
    const ChildResult r = run_script(R"lua(
      local s = gpu_metrics.start(gpu_metrics.localhost(), { backend = "nvidia-smi", interval = 0.05 })
      for i = 1, 20000 do
        pcall(s.mark, s, "phase " .. i)
        if i % 500 == 0 then runara.sleep(0.01) end
      end
      runara.sleep(2)
      local ok, r = pcall(s.stop, s)
      print("stop", ok, ok and #r.phases or r)
    )lua", {}, 60, {{"PATH", shims.path()}});
    WARN("nvidia-smi flooding 64 GPUs, 20000 marks: peak RSS " << r.max_rss_kb / 1024 << " MiB (" << baseline
                                                              << " doing nothing), " << r.seconds << " s");
    INFO(r.out << r.err);
    CHECK_FALSE(r.timed_out);
    // Either ending names the budget: the memory-limit ending, or stop() refused for it.
    const bool memory_ending = r.exit_code == 1 && r.err.find("runara: stopped: the script used more than its memory limit of 64 MiB") != std::string::npos;
    const bool refused = r.out.find("stop\tfalse\t") == 0 && r.out.find(" MiB left of the run's memory limit of 64 MiB") != std::string::npos;
    CHECK((memory_ending || refused));
    // The sampler stopped at the budget, or (on the sanitizers' slower clock) the heap got there first.
    CHECK((r.err.find("gpu_metrics samples needs about ") != std::string::npos || memory_ending));
    CHECK(r.max_rss_kb / 1024 < baseline + kCapMiB + kSlackMiB);
  }
  SECTION("stop() with 5000 samples of 16 GPUs and 2000 marks is linear") {
    shims.add("nvidia-smi",
              "case \"$*\" in\n*name,vbios*) for i in $(seq 0 15); do echo \"$i, NVIDIA H100 80GB HBM3, 96.00.A5.00.01, 590.48.01, 81559, 16\"; done; exit 0;;\nesac\n"
              "awk 'BEGIN { for (n = 0; n < 5000; n++) for (i = 0; i < 16; i++) print i \", 631.95, 19818, 81559, 100, 11, 59, 54, 1980, 2619\" }'\n"
              "exec sleep 1000");
    const ChildResult r = run_script(R"lua(
      local s = gpu_metrics.start(gpu_metrics.localhost(), { backend = "nvidia-smi", interval = 0.05 })
      for i = 1, 2000 do s:mark("phase " .. i) if i % 100 == 0 then runara.sleep(0.01) end end
      runara.sleep(2)
      local t0 = runara.now()
      local r = s:stop()
      print("stop", #r.phases, #r.samples, #r.problems, #r.phases[2000].gpus, runara.now() - t0)
    )lua", {"--max-memory", "256M"}, 60, {{"PATH", shims.path()}});
    WARN("5000 samples of 16 GPUs, 2000 marks: " << r.out << "peak RSS " << r.max_rss_kb / 1024 << " MiB, " << r.seconds << " s");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    // All 5000 readings, or nearly: the sanitizers' slower reader may not have taken the last.
    CHECK_THAT(r.out, Catch::Matches("stop\t2000\t(49[0-9][0-9]|5000)\t0\t16\t.*\n"));
    CHECK(r.seconds < 30);  // was minutes: 2000 windows x 16 GPUs x 80,000 readings
  }
}

TEST_CASE("a hostile DigitalOcean API cannot grow runara past --max-memory: a huge answer, a dense one", "[hostile_buffers][droplet]") {
  HostileServer server;
  const struct {
    const char* name;
    bool huge;
    std::string error;
  } attacks[] = {
      {"1 GiB answer", true, "droplet.sizes: DigitalOcean API: GET /v2/sizes?per_page=200: the answer is larger than 4194304 bytes "
                             "(the limit on one answer)"},
      {"3.9 MiB answer of small numbers", false, "droplet.sizes: DigitalOcean API: GET /v2/sizes?per_page=200: the answer would take about "},
  };
  for (const auto& a : attacks) {
    DYNAMIC_SECTION(a.name) {
      const long baseline = baseline_mib();
      server.do_huge = a.huge;
      server.sent = 0;
      const std::string dir = runara::test::temp_dir("hostile-do");
      const ChildResult r = run_script("local ok, err = pcall(droplet.sizes)\nprint(ok, err)", {}, 120,
                                       {{"RUNARA_DO_API_URL", server.base("")},
                                        {"DIGITALOCEAN_TOKEN", "hostile-do-token"},
                                        {"RUNARA_STATE_DIR", dir + "/state"},
                                        {"HOME", dir}});
      const long peak_mib = r.max_rss_kb / 1024;
      WARN(a.name << ": peak RSS " << peak_mib << " MiB with --max-memory " << kCapMiB << "M (" << baseline
                  << " MiB doing nothing), " << (server.sent >> 20) << " MiB sent, exit " << r.exit_code << " after "
                  << r.seconds << " s");
      INFO("stdout: " << r.out << "\nstderr: " << r.err);
      CHECK(r.exit_code == 0);
      CHECK(r.out.find("false\t" + a.error) == 0);
      CHECK(server.sent < (std::size_t{64} << 20));  // stopped reading at the bound
      CHECK(peak_mib < baseline + kCapMiB + kSlackMiB);
    }
  }
}

// Issue 25: runara.result keeps its value as a JSON document until results.json is written, and
// charged its text's bytes: a table of 200,000 short strings (3.6 MiB of text, about 40 MiB as a
// document) passed fourteen times under --max-memory 64M reached 416 MiB of peak RSS. Charged at
// the document's estimated size, the third is refused, naming the limit.
TEST_CASE("runara.result is charged at what its JSON document takes, not its text's bytes", "[hostile_buffers][results]") {
  const long baseline = baseline_mib();
  const ChildResult r = run_script(R"lua(
    local t = {}
    for i = 1, 200000 do t[i] = "abcdefghijklmnopq" end
    for k = 1, 20 do
      local ok, err = pcall(runara.result, "r" .. k, t)
      if not ok then print("refused at", k, err) break end
    end
  )lua", {}, 60);
  const long peak_mib = r.max_rss_kb / 1024;
  WARN("runara.result of 200,000 short strings, repeated: peak RSS " << peak_mib << " MiB with --max-memory " << kCapMiB << "M ("
                                                                     << baseline << " MiB doing nothing), " << r.seconds << " s");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Matches("refused at\t[23]\t.*runara.result: keeping 'r[23]' would exceed the memory limit of 64 MiB "
                                   "\\(--max-memory\\)\n"));
  CHECK(peak_mib < baseline + kCapMiB + kSlackMiB);
}
