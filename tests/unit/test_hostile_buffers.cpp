// Issue 25, item 4, end to end: C++ buffers that a remote side can grow stay bounded under
// --max-memory 64M, measured as the runara child's peak RSS, and each bound fails with a clear
// error. The hostile sides are a cpp-httplib server in this process (SSE, /metrics) and GPU tool
// shims on PATH (amd-smi, nvidia-smi).
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <vector>

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
    start();
  }
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
}
