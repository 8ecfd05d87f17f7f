#include "repl_help.hpp"

#include <unistd.h>

#include <string_view>
#include <vector>

#include "base/build_paths.hpp"

namespace runara::cli {

namespace {

// The primitives' tables, in the order docs/api.md introduces them; one missing from a runtime
// (built without it) is left out.
constexpr std::string_view kPrimitives[] = {"runara", "watchdog", "droplet", "http_load", "ssh", "gpu_metrics", "metrics"};

// The public modules of the standard library (docs/stdlib.md has a section each).
constexpr std::string_view kModules[] = {"runara.scenario", "runara.vllm", "runara.suite", "runara.replicas", "runara.cluster",
                                         "runara.repeats", "runara.machine", "runara.container", "runara.gemm",
                                         "runara.mlperf", "runara.report"};

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// "name  a, b, c" wrapped under its first field at `width` columns.
void append_row(std::string& out, std::string_view name, const std::vector<std::string>& fields) {
  constexpr std::size_t kIndent = 15, kWidth = 100;
  std::string line = "  " + std::string(name);
  line.resize(std::max(line.size() + 1, kIndent), ' ');
  bool first = true;
  for (const std::string& f : fields) {
    const std::string item = (first ? "" : ", ") + f;
    if (!first && line.size() + item.size() > kWidth) {
      out += line + ",\n";
      line = std::string(kIndent, ' ') + f;
    } else {
      line += item;
    }
    first = false;
  }
  out += line + "\n";
}

}  // namespace

bool is_help_request(Runtime& runtime, const std::string& input) {
  const std::string t = trim(input);
  if (t != "help" && t != "help()") return false;
  for (const std::string& name : runtime.complete("help")) {
    if (name == "help") return false;  // the session's own
  }
  return true;
}

std::string repl_help(Runtime& runtime) {
  std::string out =
      "runara's REPL: Lua 5.1 (LuaJIT) in the sandbox of a script run. Each input runs at once;\n"
      "Tab completes names and fields; Ctrl-C stops the running input; Ctrl-D leaves and tears\n"
      "down what the session created.\n\nPrimitives (a table each; Tab after 'name.' lists them too):\n";
  for (std::string_view name : kPrimitives) {
    std::vector<std::string> fields;
    const std::string prefix = std::string(name) + ".";
    for (const std::string& match : runtime.complete(prefix)) {
      if (match.size() > prefix.size() && match.compare(0, prefix.size(), prefix) == 0) fields.push_back(match.substr(prefix.size()));
    }
    if (!fields.empty()) append_row(out, name, fields);
  }
  out += "\nStandard library (local vllm = require(\"runara.vllm\")):\n";
  std::vector<std::string> modules(std::begin(kModules), std::end(kModules));
  append_row(out, "require", modules);
  // The docs beside the standard library (the source tree's, or installed beside its copy).
  std::string docs = build_paths::stdlib();
  docs = docs.substr(0, docs.find_last_of('/')) + "/docs";
  if (::access((docs + "/api.md").c_str(), R_OK) != 0) docs = "docs, in runara's source";
  out += "\nDocumentation (" + docs + "/):\n"
         "  api.md          the primitives above, an example each\n"
         "  http_load.md    http_load.run and the simulated server http_load.fake_server\n"
         "  ssh.md          ssh.connect and a session's exec, upload, forward\n"
         "  gpu_metrics.md  gpu_metrics and metrics\n"
         "  stdlib.md       the modules above; scenarios.md: writing a scenario\n"
         "  cli.md          the runara command and its subcommands, this REPL\n";
  return out;
}

}  // namespace runara::cli
