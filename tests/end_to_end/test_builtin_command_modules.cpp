// `runara bench` and `runara compare` are runara's commands written in Lua: their require searches
// the stdlib alone (Options::stdlib_modules_only), never the current folder. Run inside a folder
// that plants a file under every stdlib module's name, neither command runs any of them, and
// both work as usual. A user script's require still looks in its own folder first.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "sim/fake_llm_server.hpp"
#include "test_text.hpp"

using runara::test::ChildProcess;
using runara::test::ChildResult;
using runara::test::contains;
using runara::test::read_all;
using runara::test::temp_dir;
using runara::test::write_temp_file;

namespace {

constexpr const char* kMark = "PLANTED-MODULE-RAN";

// A file for every module of the stdlib (enumerated now, so a module added later is covered),
// at the same relative path under `dir`: each prints a mark and writes a file (seen even when a
// caller swallows errors with pcall), then fails. Returns the module names.
std::vector<std::string> plant_stdlib_look_alikes(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path stdlib = fs::path(RUNARA_SOURCE_DIR) / "stdlib";
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(stdlib)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".lua") continue;
    const fs::path relative = fs::relative(entry.path(), stdlib);
    std::string name = relative.string();
    name.resize(name.size() - 4);
    for (char& c : name) c = c == '/' ? '.' : c;
    names.push_back(name);
    fs::create_directories((fs::path(dir) / relative).parent_path());
    write_temp_file(dir, relative.string(),
                    "print('" + std::string(kMark) + " " + name + "')\n"
                    "pcall(runara.write_file, 'planted-" + name + ".txt', 'ran')\n"
                    "error('" + std::string(kMark) + " " + name + "')\n");
  }
  return names;
}

ChildResult runara_in(const std::string& cwd, std::vector<std::string> args, const std::map<std::string, std::string>& env) {
  args.insert(args.begin(), RUNARA_BINARY);
  ChildProcess child(args, env, cwd);
  child.close_stdin();
  return child.wait(90);
}

runara::FakeLlmConfig quick() {
  runara::FakeLlmConfig c;
  c.ttft_ms = 5;
  c.itl_ms = 1;
  c.output_tokens = 8;
  return c;
}

// No planted module left a mark: not in the output, not among the files of `out`.
void check_nothing_planted_ran(const ChildResult& r, const std::string& out) {
  CHECK_FALSE(contains(r.out, kMark));
  CHECK_FALSE(contains(r.err, kMark));
  if (!std::filesystem::is_directory(out)) return;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(out)) {
    INFO(entry.path());
    CHECK(entry.path().filename().string().rfind("planted-", 0) == std::string::npos);
  }
}

}  // namespace

TEST_CASE("runara bench and runara compare load no module from the current folder", "[http_load][bench][compare]") {
  const std::string dir = temp_dir("builtin-modules");
  const std::string shared = dir + "/shared";  // the folder someone shared, where the user runs runara
  std::filesystem::create_directories(shared);
  const std::vector<std::string> planted = plant_stdlib_look_alikes(shared);
  REQUIRE(std::find(planted.begin(), planted.end(), "runara_bench") != planted.end());
  REQUIRE(std::find(planted.begin(), planted.end(), "runara_compare") != planted.end());
  REQUIRE(std::find(planted.begin(), planted.end(), "runara.run_comparison") != planted.end());
  const std::map<std::string, std::string> env{{"RUNARA_STATE_DIR", dir + "/state"}};

  runara::FakeLlmServer server(quick());
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const std::string first = dir + "/first", second = dir + "/second";
  for (const std::string& out : {first, second}) {
    // --api-key: the handle a planted runara_bench would hold.
    const ChildResult r = runara_in(shared, {"bench", url, "--model", "fake-model", "-n", "4", "--input-len", "16",
                                             "--output-len", "8", "--api-key", "sk-not-for-planted-code", "--out", out},
                                    env);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "Successful requests:"));
    check_nothing_planted_ran(r, out);
    CHECK(nlohmann::json::parse(read_all(out + "/results.json"), nullptr, false)["run"]["status"] == "ok");
  }

  const std::string pair = dir + "/pair";
  const ChildResult c = runara_in(shared, {"compare", first, second, "--out", pair}, env);
  INFO(c.out << c.err);
  CHECK(c.exit_code == 0);
  check_nothing_planted_ran(c, pair);
  CHECK(std::filesystem::exists(pair + "/compare.json"));
  CHECK(std::filesystem::exists(pair + "/compare.md"));
  // The verdict is the stdlib's: a threshold no run of this pair can meet fails with status 4.
  const ChildResult gated =
      runara_in(shared, {"compare", first, second, "--threshold", "output_tokens_per_second=+1000", "--out", dir + "/gated"}, env);
  INFO(gated.out << gated.err);
  CHECK(gated.exit_code == 4);
  check_nothing_planted_ran(gated, dir + "/gated");

  // Without the look-alike of the command's own module, the stdlib's runs: what it requires
  // (runara.run_comparison, runara.report_svg, ...) still comes from the stdlib, not the folder.
  std::filesystem::remove(shared + "/runara_compare.lua");
  const ChildResult deps = runara_in(shared, {"compare", first, second, "--out", dir + "/deps"}, env);
  INFO(deps.out << deps.err);
  CHECK(deps.exit_code == 0);
  check_nothing_planted_ran(deps, dir + "/deps");

  // A user script in that folder still finds the folder's modules first (the documented order).
  write_temp_file(shared, "uses_stats.lua", "require('stats')\n");
  const ChildResult script = runara_in(shared, {"--out", dir + "/script", "uses_stats.lua"}, env);
  CHECK(script.exit_code == 1);
  CHECK(contains(script.out, std::string(kMark) + " stats"));
}
