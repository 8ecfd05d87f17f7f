// Signals to the `runara` command: SIGINT / SIGTERM / SIGHUP stop the script wherever it is
// (waiting or computing), the run ends promptly with 130 / 143 / 129, and what the script had
// already recorded (results.json) survives.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "test_text.hpp"

using runara::test::contains;
using runara::test::now_s;
using runara::test::read_all;

namespace {




struct Signalled {
  runara::test::ChildResult result;
  double after_signal_s = 0;  // from sending the signal to the exit
  bool was_ready = false;
};

// Starts `runara --out OUT -e CODE`, waits until it printed "ready", sends `signal_number`.
Signalled signal_run(const std::string& out_dir, const std::string& code, int signal_number) {
  runara::test::ChildProcess child(
      {RUNARA_BINARY, "--max-runtime", "60", "--out", out_dir, "-e", code});
  child.close_stdin();
  Signalled s;
  s.was_ready = child.wait_for_output("ready", 20);
  const double sent = now_s();
  child.signal(signal_number);
  s.result = child.wait(20);
  s.after_signal_s = now_s() - sent;
  return s;
}

const char* const kSleeping = "print('ready') runara.sleep(60) print('not reached')";
const char* const kComputing =
    "print('ready') local x = 0 while true do x = x + 1 end print('not reached')";

}  // namespace

TEST_CASE("SIGINT and SIGTERM stop a sleeping or computing run promptly", "[signals]") {
  struct Case {
    const char* name;
    const char* code;
    int signal_number;
    int exit_code;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"SIGINT while sleeping", kSleeping, SIGINT, 130, "interrupted (SIGINT)"},
      {"SIGINT while computing", kComputing, SIGINT, 130, "interrupted (SIGINT)"},
      {"SIGTERM while sleeping", kSleeping, SIGTERM, 143, "terminated (SIGTERM)"},
      {"SIGTERM while computing", kComputing, SIGTERM, 143, "terminated (SIGTERM)"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      auto s = signal_run(runara::test::temp_dir("signals") + "/out", c.code, c.signal_number);
      INFO("stderr: " << s.result.err);
      REQUIRE(s.was_ready);
      CHECK_FALSE(s.result.timed_out);
      CHECK(s.result.exit_code == c.exit_code);
      CHECK(contains(s.result.err, c.message));
      CHECK_FALSE(contains(s.result.out, "not reached"));
      CHECK(s.after_signal_s < 2.0);
    }
  }
}

TEST_CASE("SIGHUP ends the run with 129", "[signals]") {
  for (const char* code : {kSleeping, kComputing}) {
    DYNAMIC_SECTION(code) {
      auto s = signal_run(runara::test::temp_dir("signals-hup") + "/out", code, SIGHUP);
      INFO("stderr: " << s.result.err);
      REQUIRE(s.was_ready);
      CHECK(s.result.exit_code == 129);
      CHECK(contains(s.result.err, "SIGHUP"));
      CHECK(s.after_signal_s < 2.0);
    }
  }
}

TEST_CASE("results recorded before a signal are still written", "[signals]") {
  for (int signal_number : {SIGINT, SIGTERM}) {
    DYNAMIC_SECTION("signal " << signal_number) {
      const std::string out = runara::test::temp_dir("signals-results") + "/out";
      auto s = signal_run(out,
                          "runara.result('throughput', {tokens_per_s = 1234.5, runs = 3})\n"
                          "runara.result('phase', 'warm-up')\n"
                          "runara.log('recorded')\n"
                          "print('ready')\n"
                          "runara.sleep(60)\n"
                          "runara.result('never', true)",
                          signal_number);
      INFO("stderr: " << s.result.err);
      REQUIRE(s.was_ready);
      CHECK(s.result.exit_code == (signal_number == SIGINT ? 130 : 143));
      const std::string text = read_all(out + "/results.json");
      INFO("results.json: " << text);
      REQUIRE_FALSE(text.empty());
      const auto json = nlohmann::json::parse(text, nullptr, false);
      REQUIRE_FALSE(json.is_discarded());
      CHECK(json["throughput"]["tokens_per_s"] == 1234.5);
      CHECK(json["throughput"]["runs"] == 3);
      CHECK(json["phase"] == "warm-up");
      CHECK_FALSE(json.contains("never"));
      CHECK(contains(read_all(out + "/run.log"), "recorded"));
      CHECK(contains(s.result.err, "results in " + out));
    }
  }
}
