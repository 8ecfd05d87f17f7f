// The sandbox escape corpus (tests/sandbox/*.lua): every file is one attempt by an untrusted
// script to get out of the sandbox, past the watchdog or the memory cap, or at a secret. Each is
// run with the real `runara` command in a throwaway folder and must end the way its header says:
//
//   -- expect: safe                 ends normally (exit 0) and prints SAFE
//   -- expect: error <text>         a script error (exit 1) whose message contains <text>
//   -- expect: watchdog             stopped by the watchdog (exit 3)
//   -- expect: memory               stopped by the memory cap (exit 1, "memory limit", and so
//                                   says results.json's run record)
//   -- flags: --max-runtime 1 ...   extra runara options ({base} is the throwaway folder)
//   -- env: NAME=value              extra environment variables for the run
//   -- cloud: fake                  a fake DigitalOcean API for the run (droplets get TEST-NET
//                                   public addresses and 10.116.x.y private ones; none is a machine)
//
// Whatever the ending, a run must never print ESCAPED, never show the secret value (not even
// reversed or hex-encoded), never create, change or delete anything outside its output folder,
// and finish within a bound (for watchdog attempts: --max-runtime + 2 s). Its stdout, stderr and
// run.log hold no byte a terminal obeys (ESC, BEL, CR, C1 CSI: docs/cli.md, "Output"), and no line
// of its stderr or run.log starts with "[   0.001] FORGED" (the forged log line of the term_*
// attempts).
//
// The throwaway folder of one attempt looks like this (the fixtures the attempts aim at):
//   base/script/<attempt>.lua   a copy of the attempt: the script's own folder
//   base/script/link_secret.txt -> ../outside/secret.txt    base/script/link_outside -> ../outside
//   base/script/linkmod.lua -> ../outside/evil.lua          base/script/binmod.lua (bytecode)
//   base/script/selfreq.lua (requires itself)               base/script/sleepy.lua (waits)
//   base/script/deep_sharegpt.json (a shipped prompts file nested 100,000 levels deep)
//   base/script/backtracking_tokenizer.json (GPT-2's tokenizer.json whose pre-tokenizer regex
//                               backtracks exponentially on any prompt)
//   base/outside/secret.txt, evil.lua    base/script-evil/secret.txt (a prefix-sharing sibling)
//   base/run/                   the working folder: the output folder lands in run/results/
//   base/run/results/<UTC stamp>-<attempt> -> ../../outside, for every second the run may
//                               start in: a package that ships its output folder as a symlink
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "sim/fake_digitalocean.hpp"

namespace {

namespace fs = std::filesystem;
using runara::test::ChildProcess;
using runara::test::ChildResult;

constexpr const char* kSecretName = "RUNARA_SANDBOX_SECRET";
constexpr const char* kSecretValue = "hunter2-runara-sandbox-6b1f0c";
// Attempts that target /tmp directly use this name; it must never appear.
constexpr const char* kTmpMarker = "/tmp/runara-sandbox-escape-marker";
constexpr double kDefaultBoundS = 15;   // safe / error / memory attempts
constexpr double kWatchdogSlackS = 2;   // watchdog attempts: --max-runtime + this
constexpr std::size_t kMinimumAttempts = 25;

// `luajit -b` of: print("ESCAPED: bytecode ran") -- what binmod.lua holds.
constexpr unsigned char kBytecode[] = {
    27, 76, 74, 2, 10, 51, 2, 0, 3, 0, 2, 0, 4, 54, 0, 0, 0, 39, 2, 1, 0, 66, 0, 2, 1, 75, 0, 1, 0,
    26, 69, 83, 67, 65, 80, 69, 68, 58, 32, 98, 121, 116, 101, 99, 111, 100, 101, 32, 114, 97, 110,
    10, 112, 114, 105, 110, 116, 0};

enum class Ending { safe, error, watchdog, memory };

const char* ending_name(Ending ending) {
  switch (ending) {
    case Ending::safe: return "safe";
    case Ending::error: return "error";
    case Ending::watchdog: return "watchdog";
    case Ending::memory: return "memory";
  }
  return "?";
}

struct Attempt {
  std::string name;  // file name, e.g. "env_io_popen.lua"
  fs::path path;
  Ending ending = Ending::safe;
  std::string error_text;  // for Ending::error: a substring of the message
  std::vector<std::string> flags;
  std::map<std::string, std::string> env;
  double max_runtime_s = 0;  // from --max-runtime in flags, 0 if absent
  bool fake_cloud = false;   // -- cloud: fake
  std::string problem;       // what is wrong with the header, "" if nothing
};

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// GPT-2's tokenizer.json with a pre-tokenizer regex that needs exponential steps to fail: any
// run of words followed by anything but a digit.
std::string backtracking_tokenizer() {
  std::ifstream in(std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/tokenizers/gpt2/tokenizer.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {
      {{"type", "Split"}, {"pattern", {{"Regex", "(\\w+\\s?)+\\d"}}}, {"behavior", "Isolated"}},
      {{"type", "ByteLevel"}, {"use_regex", false}}}}};
  return doc.dump();
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_file(const fs::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

// Reads the header: the comment lines at the top of the file.
Attempt parse_attempt(const fs::path& path) {
  Attempt a;
  a.name = path.filename().string();
  a.path = path;
  std::istringstream lines(read_file(path));
  std::string line;
  int expects = 0;
  while (std::getline(lines, line) && line.rfind("--", 0) == 0) {
    const std::string body = trim(line.substr(2));
    auto field = [&](const char* key) -> const char* {
      const std::size_t n = std::strlen(key);
      return body.compare(0, n, key) == 0 ? body.c_str() + n : nullptr;
    };
    if (const char* rest = field("expect:")) {
      ++expects;
      std::istringstream words(rest);
      std::string kind;
      words >> kind;
      if (kind == "safe") a.ending = Ending::safe;
      else if (kind == "watchdog") a.ending = Ending::watchdog;
      else if (kind == "memory") a.ending = Ending::memory;
      else if (kind == "error") {
        a.ending = Ending::error;
        std::string text;
        std::getline(words, text);
        a.error_text = trim(text);
        if (a.error_text.empty()) a.problem = "'expect: error' needs a substring of the message";
      } else {
        a.problem = "unknown expectation '" + kind + "'";
      }
    } else if (const char* rest = field("flags:")) {
      std::istringstream words(rest);
      for (std::string w; words >> w;) a.flags.push_back(w);
    } else if (const char* rest = field("cloud:")) {
      if (trim(rest) == "fake") a.fake_cloud = true;
      else a.problem = "unknown cloud '" + trim(rest) + "' (only 'fake')";
    } else if (const char* rest = field("env:")) {
      const std::string entry = trim(rest);
      const std::size_t eq = entry.find('=');
      if (eq == std::string::npos || eq == 0) a.problem = "bad env line '" + entry + "' (NAME=value)";
      else a.env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  if (expects != 1) a.problem = "the header needs exactly one '-- expect:' line, found " + std::to_string(expects);
  for (std::size_t i = 0; i + 1 < a.flags.size(); ++i) {
    if (a.flags[i] == "--max-runtime") a.max_runtime_s = std::strtod(a.flags[i + 1].c_str(), nullptr);
  }
  if (a.problem.empty() && a.ending == Ending::watchdog && !(a.max_runtime_s > 0 && a.max_runtime_s <= 2)) {
    a.problem = "a watchdog attempt must set '-- flags: --max-runtime 1' (or 2)";
  }
  return a;
}

const std::vector<Attempt>& corpus() {
  static const std::vector<Attempt> attempts = [] {
    std::vector<Attempt> out;
    const fs::path dir = fs::path(RUNARA_SOURCE_DIR) / "tests" / "sandbox";
    if (!fs::is_directory(dir)) return out;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".lua") out.push_back(parse_attempt(entry.path()));
    }
    std::sort(out.begin(), out.end(), [](const Attempt& x, const Attempt& y) { return x.name < y.name; });
    return out;
  }();
  return attempts;
}

// ---- the throwaway folder ----

struct Sandbox {
  fs::path base, script, run;
};

// results/<stamp>-<attempt> as symlinks to ../../outside: were one adopted as the output
// folder, run.log would land in outside/, which the snapshot check catches.
void plant_output_symlinks(const Sandbox& s, const Attempt& a) {
  const std::string stem = a.name.substr(0, a.name.size() - 4);
  fs::create_directories(s.run / "results");
  for (int offset = -2; offset <= 25; ++offset) {
    const std::time_t when = std::time(nullptr) + offset;
    std::tm utc{};
    gmtime_r(&when, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
    std::error_code exists;
    fs::create_directory_symlink("../../outside", s.run / "results" / (std::string(stamp) + "-" + stem), exists);
  }
}

Sandbox make_sandbox(const Attempt& a) {
  Sandbox s;
  s.base = runara::test::temp_dir("sandbox");
  s.script = s.base / "script";
  s.run = s.base / "run";
  for (const auto& dir : {s.script, s.run, s.base / "outside", s.base / "script-evil"}) fs::create_directories(dir);
  const std::string evil = "print('ESCAPED: ' .. 'a module from outside the script folder ran')\nreturn {}\n";
  write_file(s.base / "outside" / "secret.txt", std::string(kSecretValue) + "\n");
  write_file(s.base / "outside" / "evil.lua", evil);
  write_file(s.base / "script-evil" / "secret.txt", std::string(kSecretValue) + "\n");
  write_file(s.base / "script-evil" / "evil.lua", evil);
  fs::copy_file(a.path, s.script / a.name);
  fs::create_symlink("../outside/secret.txt", s.script / "link_secret.txt");
  fs::create_directory_symlink("../outside", s.script / "link_outside");
  fs::create_symlink("../outside/evil.lua", s.script / "linkmod.lua");
  write_file(s.script / "binmod.lua", std::string(reinterpret_cast<const char*>(kBytecode), sizeof kBytecode));
  write_file(s.script / "selfreq.lua", "require('selfreq')\nreturn {}\n");
  write_file(s.script / "sleepy.lua", "runara.sleep(0.2)\nreturn {}\n");
  write_file(s.script / "deep_sharegpt.json", "[" + std::string(100000, '[') + std::string(100000, ']') + "]");
  if (a.name.find("tokenizer") != std::string::npos) write_file(s.script / "backtracking_tokenizer.json", backtracking_tokenizer());
  plant_output_symlinks(s, a);
  return s;
}

bool in_output_folder(const std::string& relative) {
  return relative == "run/results" || relative.rfind("run/results/", 0) == 0;
}

// Every entry under `root` (symlinks not followed): relative path -> "type size".
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const auto status = it->symlink_status();
    std::string what;
    if (fs::is_symlink(status)) what = "link " + fs::read_symlink(it->path()).string();
    else if (fs::is_directory(status)) what = "dir";
    else if (fs::is_regular_file(status)) what = "file " + std::to_string(fs::file_size(it->path()));
    else what = "other";
    const std::string relative = fs::relative(it->path(), root).string();
    // Outside the output folder, a file changed in place (same size) must show too.
    if (fs::is_regular_file(status) && !in_output_folder(relative)) {
      what += " " + std::to_string(std::hash<std::string>{}(read_file(it->path())));
    }
    out[relative] = what;
  }
  return out;
}

// ---- leak checks ----

std::string to_hex(const std::string& s, bool upper) {
  static const char* lower_digits = "0123456789abcdef";
  static const char* upper_digits = "0123456789ABCDEF";
  const char* digits = upper ? upper_digits : lower_digits;
  std::string out;
  for (unsigned char c : s) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// The forms a leaked value may take in output: as is, reversed, hex-encoded.
std::vector<std::string> leak_forms(const std::string& value) {
  return {value, std::string(value.rbegin(), value.rend()), to_hex(value, false), to_hex(value, true)};
}

std::vector<std::string> secret_values(const Attempt& a) {
  std::vector<std::string> values{kSecretValue};
  for (const auto& [name, value] : a.env) {
    if (name.find("SECRET") != std::string::npos && !value.empty()) values.push_back(value);
  }
  return values;
}

// Where in `text` a secret shows up ("" if nowhere).
std::string find_leak(const std::string& text, const std::vector<std::string>& secrets) {
  for (const auto& secret : secrets) {
    for (const auto& form : leak_forms(secret)) {
      if (text.find(form) != std::string::npos) return form;
    }
  }
  return {};
}

std::string tail(const std::string& text, std::size_t n = 2000) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

// The first byte of `text` a terminal would obey (ESC, BEL, CR, backspace, DEL, a C1 CSI), as
// "0xNN at N", or "".
std::string raw_control(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c == 0x9b && (i == 0 || static_cast<unsigned char>(text[i - 1]) < 0x80 || text[i - 1] == '\xc2'))) {
      char where[48];
      std::snprintf(where, sizeof where, "0x%02x at %zu", c, i);
      return where;
    }
  }
  return {};
}

bool forged_log_line(const std::string& text) {
  const std::string forged = "[   0.001] FORGED";
  return text.rfind(forged, 0) == 0 || text.find("\n" + forged) != std::string::npos;
}

// ---- one attempt ----

void check_attempt(const Attempt& a) {
  INFO("attempt: tests/sandbox/" << a.name << " (expect: " << ending_name(a.ending)
                                 << (a.error_text.empty() ? "" : " ") << a.error_text << ")");
  REQUIRE(a.problem.empty());

  std::error_code ignored;
  fs::remove(kTmpMarker, ignored);
  const Sandbox box = make_sandbox(a);
  const auto before = snapshot(box.base);

  std::vector<std::string> argv{RUNARA_BINARY};
  for (std::string flag : a.flags) {
    for (std::size_t pos; (pos = flag.find("{base}")) != std::string::npos;) flag.replace(pos, 6, box.base.string());
    argv.push_back(flag);
  }
  argv.push_back((box.script / a.name).string());
  argv.push_back("base=" + box.base.string());
  std::map<std::string, std::string> env{{kSecretName, kSecretValue}};
  for (const auto& [name, value] : a.env) env[name] = value;
  // The fake API and the ledger live outside the throwaway folder: only the run's own writes
  // land there.
  std::unique_ptr<runara::sim::FakeDigitalOcean> cloud;
  const std::string state_dir = a.fake_cloud ? runara::test::temp_dir("sandbox-state") : "";
  if (a.fake_cloud) {
    runara::sim::FakeDoConfig config;
    config.token = "sandbox-token";
    config.active_after_s = 0.05;
    config.delete_after_s = 0.05;
    config.enforce_rate_limits = false;
    cloud = std::make_unique<runara::sim::FakeDigitalOcean>(config);
    cloud->start();
    env["RUNARA_DO_API_URL"] = cloud->base_url();
    env["DIGITALOCEAN_TOKEN"] = config.token;
    env["RUNARA_STATE_DIR"] = state_dir;
    env["RUNARA_POLL_S"] = "0.05";
  }

  const double bound = a.ending == Ending::watchdog ? a.max_runtime_s + kWatchdogSlackS : kDefaultBoundS;
  ChildProcess child(argv, env, box.run.string());
  const ChildResult r = child.wait(bound + 5);

  INFO("exit code " << r.exit_code << " after " << r.seconds << " s" << (r.timed_out ? " (killed: timed out)" : "")
                    << "\n--- stdout ---\n" << tail(r.out) << "\n--- stderr ---\n" << tail(r.err));

  // The attempt did not get through.
  CHECK(r.out.find("ESCAPED") == std::string::npos);
  CHECK(r.err.find("ESCAPED") == std::string::npos);

  // It ended the declared way, in time.
  CHECK_FALSE(r.timed_out);
  CHECK(r.seconds <= bound);
  switch (a.ending) {
    case Ending::safe:
      CHECK(r.exit_code == 0);
      CHECK(r.out.find("SAFE") != std::string::npos);
      break;
    case Ending::error:
      CHECK(r.exit_code == 1);
      CHECK(r.err.find(a.error_text) != std::string::npos);
      break;
    case Ending::watchdog:
      CHECK(r.exit_code == 3);
      CHECK(r.err.find("stopped by the watchdog") != std::string::npos);
      break;
    case Ending::memory:
      CHECK(r.exit_code == 1);
      CHECK(r.err.find("memory limit") != std::string::npos);
      break;
  }

  // Nothing a terminal obeys, and no forged log line, on the terminal or in run.log.
  std::string run_log;
  {
    std::error_code none;
    for (auto it = fs::recursive_directory_iterator(box.run / "results", none); !none && it != fs::recursive_directory_iterator();
         it.increment(none)) {
      if (!it->is_symlink() && it->path().filename() == "run.log") run_log += read_file(it->path());
    }
  }
  // Stopped by the cap, the run still ends as a run does: its record says so (a LuaJIT panic
  // would have ended the process before any of it was written).
  if (a.ending == Ending::memory) {
    std::string results;
    std::error_code none;
    for (auto it = fs::recursive_directory_iterator(box.run / "results", none); !none && it != fs::recursive_directory_iterator();
         it.increment(none)) {
      if (!it->is_symlink() && it->path().filename() == "results.json") results = read_file(it->path());
    }
    nlohmann::json record = nlohmann::json::parse(results, nullptr, false);
    INFO("results.json: " << tail(results));
    REQUIRE(record.is_object());
    CHECK(record["run"]["exit_code"] == 1);
    CHECK(record["run"]["error"].is_string());
    CHECK(record["run"]["error"].dump().find("memory limit") != std::string::npos);
  }

  CHECK(raw_control(r.out) == "");
  CHECK(raw_control(r.err) == "");
  CHECK(raw_control(run_log) == "");
  CHECK_FALSE(forged_log_line(r.err));
  CHECK_FALSE(forged_log_line(run_log));

  // No secret in what the run printed or wrote.
  const auto secrets = secret_values(a);
  CHECK(find_leak(r.out, secrets).empty());
  CHECK(find_leak(r.err, secrets).empty());
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(box.run, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_symlink() || !it->is_regular_file()) continue;
    const std::string leaked = find_leak(read_file(it->path()), secrets);
    INFO("output file " << it->path().string());
    CHECK(leaked.empty());
  }

  // Nothing created, changed or deleted outside the run's output folder.
  const auto after = snapshot(box.base);
  for (const auto& [path, what] : after) {
    if (in_output_folder(path)) continue;
    auto old = before.find(path);
    INFO("outside the output folder: " << path << " (" << what << ")");
    CHECK((old != before.end() && old->second == what));
  }
  for (const auto& [path, what] : before) {
    INFO("removed: " << path << " (" << what << ")");
    CHECK(after.count(path) == 1);
  }
  CHECK_FALSE(fs::exists(fs::symlink_status(kTmpMarker)));
  fs::remove(kTmpMarker, ignored);

  if (cloud) CHECK(cloud->live_droplets() == 0);  // whatever the attempt did, its machines went
  // Not remove_all: a guardian may still be confirming the run's teardown in state_dir.
  runara::test::remove_temp_dir(box.base.string());
  if (!state_dir.empty()) runara::test::remove_temp_dir(state_dir);
}

void check_all(Ending ending) {
  for (const auto& attempt : corpus()) {
    if (attempt.ending != ending) continue;
    DYNAMIC_SECTION(attempt.name) { check_attempt(attempt); }
  }
}

}  // namespace

TEST_CASE("sandbox escape corpus: at least 25 attempts with valid headers", "[sandbox]") {
  const auto& attempts = corpus();
  CHECK(attempts.size() >= kMinimumAttempts);
  for (const auto& a : attempts) {
    INFO("tests/sandbox/" << a.name << ": " << a.problem);
    CHECK(a.problem.empty());
  }
}

TEST_CASE("sandbox escape corpus: attempts that must end normally (expect: safe)", "[sandbox]") {
  check_all(Ending::safe);
}

TEST_CASE("sandbox escape corpus: attempts that must end in a script error (expect: error)", "[sandbox]") {
  check_all(Ending::error);
}

TEST_CASE("sandbox escape corpus: attempts the watchdog must stop (expect: watchdog)", "[sandbox]") {
  check_all(Ending::watchdog);
}

TEST_CASE("sandbox escape corpus: attempts the memory cap must stop (expect: memory)", "[sandbox]") {
  check_all(Ending::memory);
}
