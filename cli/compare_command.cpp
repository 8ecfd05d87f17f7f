#include "compare_command.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "cloud/droplet_fleet.hpp"
#include "compare_gate.hpp"
#include "command_line.hpp"
#include "guards/permissions.hpp"
#include "run/history.hpp"
#include "run/history_entry.hpp"
#include "runara/runtime.hpp"
#include "runs_command.hpp"
#include "signals.hpp"
#include "terminal_events.hpp"
#include "sim/fake_server_primitive.hpp"

namespace runara::cli {

namespace {

const char* const kUsage =
    "usage: runara compare RUN_DIR|RUN_ID... [--baseline DIR|ID] [--last N [--script NAME] [--real | --sim]]\n"
    "                      [--threshold METRIC=PCT ...] [--noise PCT] [--allow-different-workloads] [--out DIR]\n"
    "  Compares two or more runs' results.json: each metric of each load they share, each run's value,\n"
    "  the difference against the baseline (the first run, or --baseline) and a verdict: better, worse,\n"
    "  or within noise (overlapping intervals where repeats gave them, else within --noise PCT, default 2).\n"
    "  Writes compare.md, compare.html and compare.json into --out (default results/<time>-compare/).\n"
    "  A run is a folder, a run id (or its start) from `runara runs`, or --last N: the newest N runs\n"
    "  (of --script NAME). --threshold output_tokens_per_second=-5: worse by more than 5 % than the\n"
    "  baseline fails (exit status 4); +5 asks for at least 5 % better. Repeatable.\n"
    "  Runs whose workloads differ (simulated vs real, profile, engine, a load's prompt set or output\n"
    "  length) are refused; --allow-different-workloads compares them anyway, marked as such.\n"
    "  Exit status: 0, 4 a threshold crossed, 1 nothing comparable, 2 usage. See docs/cli.md#runara-compare.\n";

constexpr const char* kUsageMarker = "runara compare: usage: ";
// The scenario's refusal of runs that measured different workloads: a usage error of one line.
constexpr const char* kRefusedMarker = "runara compare: refused: ";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "runara compare: %s\n%s", visible(message).c_str(), kUsage);
  return static_cast<int>(Exit::usage);
}

bool is_folder(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_number(const std::string& text) {
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0';
}

std::string default_out() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  return std::string("results/") + stamp + "-compare";
}

struct NamedRun {
  std::string dir;    // absolute
  std::string label;  // the run id where the history knows it, else the folder as given
};

// Why a run of the history has no results to compare yet, or ever; "" when it may have.
std::string not_comparable(const HistoryEntry& run) {
  if (run.status == kRunning) return "is still running: compare it once it has ended";
  if (run.status == kKilled) return "ended without a record (killed: SIGKILL or a crash): it wrote no results.json";
  return {};
}

// A folder, or a run id (or its unique start) from the history; "" with `error` set otherwise.
std::string resolve(const std::string& name, std::string& label, std::string& error) {
  if (is_folder(name)) {
    label = name;
    return canonical_path(name, "");
  }
  const std::string state = default_state_dir();
  const bool looks_like_id = name.find('/') == std::string::npos;
  if (looks_like_id && ::access((state + "/history.db").c_str(), F_OK) == 0) {
    try {
      if (auto found = RunHistory(state).find(name)) {
        const HistoryEntry run = as_seen_now(std::move(*found));
        label = run.run_id;
        if (const std::string why = not_comparable(run); !why.empty()) {
          error = "run " + run.run_id + " " + why;
          return {};
        }
        if (run.out_dir.empty()) {
          error = "run " + run.run_id + " left no output folder (" + run.status + ")";
          return {};
        }
        if (!is_folder(run.out_dir)) {
          error = "run " + run.run_id + "'s folder " + run.out_dir + " is gone (moved or deleted); name the folder where it is now";
          return {};
        }
        return canonical_path(run.out_dir, "");
      }
    } catch (const std::exception& e) {
      error = e.what();
      return {};
    }
  }
  error = "'" + name + "' is neither a folder nor a run id in the run history (`runara runs` lists them)";
  return {};
}

}  // namespace

int compare_command(int argc, char** argv) {
  std::vector<std::string> names, thresholds;
  std::string baseline, out, noise, script;
  int last = 0;
  bool allow_different_workloads = false;
  HistoryQuery::Kind kind = HistoryQuery::Kind::any;
  CommandLineParser parser(kUsage);
  parser.positionals([&](const std::string& v) { return names.push_back(v), std::string(); })
      .option("--baseline", [&](const std::string& v) { return baseline = v, std::string(); })
      .option("--out", [&](const std::string& v) { return out = v, std::string(); })
      .option("--script", [&](const std::string& v) { return script = v, std::string(); })
      .option("--noise", [&](const std::string& v) {
        if (!is_number(v) || std::strtod(v.c_str(), nullptr) < 0) return "--noise expects a percentage >= 0, got '" + v + "'";
        return noise = v, std::string();
      })
      .option("--last", [&](const std::string& v) {
        char* end = nullptr;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 1 || n > 100) return "--last expects a whole number from 1 to 100, got '" + v + "'";
        return last = static_cast<int>(n), std::string();
      })
      .option("--threshold", [&](const std::string& v) {
        const std::size_t eq = v.find('=');
        if (eq == std::string::npos || eq == 0 || !is_number(v.substr(eq + 1)))
          return "--threshold expects METRIC=PCT, such as output_tokens_per_second=-5, got '" + v + "'";
        return thresholds.push_back(v), std::string();
      })
      .flag("--allow-different-workloads", [&] { allow_different_workloads = true; })
      .flag("--real", [&] { kind = HistoryQuery::Kind::real; })
      .flag("--sim", [&] { kind = HistoryQuery::Kind::simulated; });
  if (int status = parser.parse_or_status(argc, argv, 2, "runara compare", kUsage); status >= 0) return status;
  if (!script.empty() && last == 0) return usage_error("--script picks runs for --last N; add --last 2 (the last two of that script)");

  std::vector<NamedRun> runs;
  // A run may be named twice (a run against itself: everything within noise), but the baseline
  // named again among the others is the baseline only.
  auto add = [&](const std::string& dir, const std::string& label) {
    if (!baseline.empty() && !runs.empty() && runs.front().dir == dir) return;
    runs.push_back({dir, label});
  };
  if (!baseline.empty()) {
    std::string label, error;
    const std::string dir = resolve(baseline, label, error);
    if (dir.empty()) return usage_error("--baseline: " + error);
    add(dir, label);
  }
  for (const auto& name : names) {
    std::string label, error;
    const std::string dir = resolve(name, label, error);
    if (dir.empty()) return usage_error(error);
    add(dir, label);
  }
  if (last > 0) {
    std::string error;
    HistoryQuery query{script, 0, kind};
    std::vector<HistoryEntry> found;
    for (auto& r : history_runs(query, error)) {
      if (static_cast<int>(found.size()) == last) break;
      if (const std::string why = not_comparable(r); !why.empty()) {
        std::fprintf(stderr, "runara compare: skipping run %s: it %s\n", r.run_id.c_str(), why.c_str());
      } else if (!r.out_dir.empty() && is_folder(r.out_dir)) found.push_back(std::move(r));
      else std::fprintf(stderr, "runara compare: skipping run %s: its folder %s is gone\n", r.run_id.c_str(), visible(r.out_dir).c_str());
    }
    if (static_cast<int>(found.size()) < last) {
      return usage_error("--last " + std::to_string(last) + ": the run history has " + std::to_string(found.size()) + " run(s)" +
                         (script.empty() ? "" : " of " + script) + " with their folder" + (error.empty() ? "" : " (" + error + ")"));
    }
    // Oldest first: "the last two" compares the newer against the older, the older as baseline.
    for (auto it = found.rbegin(); it != found.rend(); ++it) {
      const std::string dir = canonical_path(it->out_dir, "");
      bool named = false;  // --last adds what the names did not already give
      for (const auto& r : runs) named = named || r.dir == dir;
      if (!named) runs.push_back({dir, it->run_id});
    }
  }
  if (runs.size() < 2) return usage_error("name at least two runs (folders or run ids), or --last 2");

  Options options;
  options.out_dir = out.empty() ? default_out() : out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    options.permissions.earlier_runs.push_back(runs[i].dir);  // these folders, nothing else
    options.args.push_back("run" + std::to_string(i + 1) + "=" + runs[i].dir);
    options.args.push_back("label" + std::to_string(i + 1) + "=" + runs[i].label);
  }
  for (std::size_t i = 0; i < thresholds.size(); ++i) options.args.push_back("threshold" + std::to_string(i + 1) + "=" + thresholds[i]);
  if (!noise.empty()) options.args.push_back("noise=" + noise);
  if (allow_different_workloads) options.args.push_back("allow_different_workloads=1");
  // The command is runara's code: runara_compare and all it requires come from the stdlib, never
  // from the current folder (someone else's, perhaps: theirs would decide --threshold's verdict).
  options.stdlib_modules_only = true;
  Runtime runtime(options, terminal_events());
  runtime.add_primitive(make_fake_server_primitive());  // http_load.fake_server (the simulator)
  runtime.add_primitive(make_compare_gate());
  install_signal_handlers(runtime);
  const Outcome outcome = runtime.run_string("require('runara_compare').run(runara.params)", "=(runara compare)");
  // The scenario's own usage errors (an unknown metric in --threshold) are the command line's.
  if (outcome.exit == Exit::script_error && outcome.message.rfind(kUsageMarker, 0) == 0) {
    return usage_error(outcome.message.substr(std::string(kUsageMarker).size()));
  }
  if (outcome.exit == Exit::script_error && outcome.message.rfind(kRefusedMarker, 0) == 0) {
    std::fprintf(stderr, "runara compare: %s\n", visible(outcome.message.substr(std::string(kRefusedMarker).size())).c_str());
    return static_cast<int>(Exit::usage);
  }
  // The scenario's own verdicts on the runs ("nothing in common to compare") are answers, not
  // crashes: said without the Lua traceback.
  if (outcome.exit == Exit::script_error && outcome.message.rfind("runara compare: ", 0) == 0) {
    Outcome said = outcome;
    said.traceback.clear();
    said.message.erase(0, std::string("runara compare: ").size());  // report_outcome says "runara: " itself
    return report_outcome(said);
  }
  return report_outcome(outcome);
}

}  // namespace runara::cli
