// The run's output folder (runtime/base/run_output.*): a fresh folder per run, never one a script
// package planted. A package that ships results/<UTC stamp>-<name> as a symlink must not get
// the symlink's target as its output folder.
#include <catch2/catch.hpp>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "test_text.hpp"

using runara::test::read_all;

namespace {

namespace fs = std::filesystem;
using runara::test::ChildProcess;
using runara::test::ChildResult;

std::string stamp_in(int seconds_from_now) {
  std::time_t when = std::time(nullptr) + seconds_from_now;
  std::tm utc{};
  gmtime_r(&when, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &utc);
  return text;
}


const char* const kScript =
    "runara.log('a log line')\n"
    "runara.write_file('note.txt', 'from the script')\n"
    "runara.result('x', 1)\n"
    "print('out=' .. runara.out_dir())\n";

struct Package {
  fs::path dir, victim;
};

// A package folder holding bench.lua, and a "victim" folder standing in for ~/.ssh.
Package make_package() {
  Package p;
  const fs::path base = runara::test::temp_dir("outdir");
  p.dir = base / "pkg";
  p.victim = base / "victim";
  fs::create_directories(p.dir);
  fs::create_directories(p.victim);
  std::ofstream(p.victim / "id_ed25519") << "PRIVATE KEY\n";
  std::ofstream(p.dir / "bench.lua") << kScript;
  return p;
}

ChildResult run_in(const fs::path& dir) {
  ChildProcess child({RUNARA_BINARY, "--max-runtime", "30", "bench.lua"}, {}, dir.string());
  return child.wait(30);
}

}  // namespace

TEST_CASE("a results/<stamp>-<name> symlink shipped in a package is never used as the output folder", "[output]") {
  Package p = make_package();
  fs::create_directories(p.dir / "results");
  // Symlinks for every second the run could start in.
  for (int s = -2; s <= 20; ++s) fs::create_directory_symlink(p.victim, p.dir / "results" / (stamp_in(s) + "-bench"));
  const ChildResult r = run_in(p.dir);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  // Nothing was written into, or read from, the victim folder.
  CHECK(fs::exists(p.victim / "id_ed25519"));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(p.victim)) ++entries;
  CHECK(entries == 1);
  // The output folder is a real folder of its own under results/.
  const std::size_t at = r.out.find("out=");
  REQUIRE(at != std::string::npos);
  const std::string out = r.out.substr(at + 4, r.out.find('\n', at) - at - 4);
  const fs::path folder = p.dir / out;
  CHECK_FALSE(fs::is_symlink(folder));
  CHECK(fs::is_directory(folder));
  CHECK(read_all(folder / "note.txt") == "from the script");
  CHECK(read_all(folder / "run.log").find("a log line") != std::string::npos);
  CHECK(fs::exists(folder / "results.json"));
}

TEST_CASE("a results folder that is a symlink is refused with a clear error", "[output]") {
  Package p = make_package();
  fs::create_directory_symlink(p.victim, p.dir / "results");
  const ChildResult r = run_in(p.dir);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("symlink") != std::string::npos);
  CHECK(r.err.find("--out") != std::string::npos);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(p.victim)) ++entries;
  CHECK(entries == 1);
}

TEST_CASE("output folder: --out naming a symlink is refused, an existing real folder is used", "[output]") {
  Package p = make_package();
  fs::create_directory_symlink(p.victim, p.dir / "linked");
  ChildProcess bad({RUNARA_BINARY, "--out", "linked", "bench.lua"}, {}, p.dir.string());
  const ChildResult r = bad.wait(30);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("symlink") != std::string::npos);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(p.victim)) ++entries;
  CHECK(entries == 1);

  fs::create_directories(p.dir / "mine");
  ChildProcess good({RUNARA_BINARY, "--out", "mine", "bench.lua"}, {}, p.dir.string());
  const ChildResult g = good.wait(30);
  INFO(g.out << g.err);
  CHECK(g.exit_code == 0);
  CHECK(read_all(p.dir / "mine" / "note.txt") == "from the script");
}

TEST_CASE("an earlier run's output folder is not readable either (no redaction oracle across runs)", "[output]") {
  // Run 1 logs candidates (run.log masks the one that is the secret); run 2, from the same
  // folder (so results/ lies inside the script's folder), tries to read that run.log back.
  Package p = make_package();
  std::ofstream(p.dir / "log.lua") << "for pin = 482910, 482916 do runara.log('candidate ' .. pin) end\n"
                                      "print('out=' .. runara.out_dir())\n";
  const std::map<std::string, std::string> env{{"RUNARA_TEST_PIN", "482913"}};
  ChildProcess first({RUNARA_BINARY, "--secret", "RUNARA_TEST_PIN", "log.lua"}, env, p.dir.string());
  const ChildResult r1 = first.wait(30);
  INFO(r1.out << r1.err);
  REQUIRE(r1.exit_code == 0);
  const std::size_t at = r1.out.find("out=");
  REQUIRE(at != std::string::npos);
  const std::string earlier = r1.out.substr(at + 4, r1.out.find('\n', at) - at - 4);
  std::ofstream(p.dir / "read.lua") << "local ok, err = pcall(runara.read_file, '" << earlier << "/run.log')\n"
                                       "print(ok, ok and 'ESCAPED: read an earlier run.log' or err)\n";
  ChildProcess second({RUNARA_BINARY, "--secret", "RUNARA_TEST_PIN", "read.lua"}, env, p.dir.string());
  const ChildResult r2 = second.wait(30);
  INFO(r2.out << r2.err);
  CHECK(r2.exit_code == 0);
  CHECK(r2.out.find("ESCAPED") == std::string::npos);
  CHECK(r2.out.find("output folder") != std::string::npos);
}

TEST_CASE("a module written to the output folder cannot be loaded back with require (no redaction oracle)", "[output]") {
  // From the package folder, results/ lies inside the script's folder, so require's own
  // "inside the script's folder" check alone would let the masked module come back.
  Package p = make_package();
  std::ofstream(p.dir / "oracle.lua") << "runara.write_file('g.lua', \"return '482913'\")\n"
                                          "local mod = runara.out_dir():gsub('/', '.') .. '.g'\n"
                                          "local ok, err = pcall(require, mod)\n"
                                          "print(ok and 'ESCAPED: loaded ' .. tostring(err) or err)\n";
  const std::map<std::string, std::string> env{{"RUNARA_TEST_PIN", "482913"}};
  ChildProcess child({RUNARA_BINARY, "--secret", "RUNARA_TEST_PIN", "oracle.lua"}, env, p.dir.string());
  const ChildResult r = child.wait(30);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("ESCAPED") == std::string::npos);
  CHECK(r.out.find("is in an output folder") != std::string::npos);
}

TEST_CASE("only a folder the run made is marked as an output folder; a reused --out folder stays readable later", "[output]") {
  Package p = make_package();
  fs::create_directories(p.dir / "mine");
  std::ofstream(p.dir / "mine" / "data.txt") << "user data";
  ChildProcess reuse({RUNARA_BINARY, "--out", "mine", "bench.lua"}, {}, p.dir.string());
  const ChildResult r = reuse.wait(30);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(fs::exists(p.dir / "mine" / ".runara-output"));
  ChildProcess made({RUNARA_BINARY, "--out", "fresh", "bench.lua"}, {}, p.dir.string());
  CHECK(made.wait(30).exit_code == 0);
  CHECK(fs::exists(p.dir / "fresh" / ".runara-output"));
  // A later run may still read the user's own file in the reused folder.
  std::ofstream(p.dir / "read.lua") << "print(runara.read_file('mine/data.txt'))\n";
  ChildProcess later({RUNARA_BINARY, "read.lua"}, {}, p.dir.string());
  const ChildResult l = later.wait(30);
  INFO(l.out << l.err);
  CHECK(l.exit_code == 0);
  CHECK(l.out.find("user data") != std::string::npos);
}
