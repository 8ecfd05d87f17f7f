#include "runs_command.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "cloud/droplet_fleet.hpp"
#include "command_line.hpp"
#include "run/history_entry.hpp"

namespace runara::cli {

namespace {

const char* const kUsage =
    "usage: runara runs [--script NAME] [--limit N] [--real | --sim] [--json]\n"
    "  Lists past runs, newest first, from the run history ($RUNARA_STATE_DIR/history.db, default\n"
    "  ~/.local/state/runara): id, start, status, where it ran (droplet, your machine USER@HOST,\n"
    "  endpoint URL, simulated, this computer), script, output tok/s, TTFT p50, cost, output folder\n"
    "  ((missing) when it was moved or deleted). Status: running, ok, failed,\n"
    "  stopped, watchdog, thresholds, or killed: it ended without a record (SIGKILL, a crash).\n"
    "  --script NAME: runs of one script (its path, file name, or name without .lua)\n"
    "  --limit N: at most N runs (default 20; 0: all)   --real / --sim: only real / simulated runs\n"
    "  --json: one JSON array. Compare two of them: runara compare ID ID, or --last 2 --script NAME\n";

bool folder_exists(const std::string& dir) {
  struct stat st{};
  return !dir.empty() && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string when(double unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &utc);
  return text;
}

std::string figure(const std::optional<double>& v, const char* spec) {
  if (!v) return "-";
  char text[64];
  std::snprintf(text, sizeof text, spec, *v);
  return text;
}

// Where a run ran; a row of an older runara recorded none: "simulated" or "?" then.
std::string where_text(const HistoryEntry& r) {
  if (!r.where.empty()) return r.where;
  if (r.simulated) return "simulated";
  return r.status == kRunning ? "(not known yet)" : "?";
}

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json row_json(const HistoryEntry& r) {
  return {{"run_id", r.run_id}, {"script", r.script}, {"script_sha256", r.script_sha256},
          {"start_utc", when(r.start_unix)}, {"start_unix", r.start_unix},
          {"end_unix", r.end_unix > 0 ? nlohmann::json(r.end_unix) : nlohmann::json(nullptr)},  // running, killed: none
          {"exit_code", r.exit_code}, {"status", r.status}, {"simulated", r.simulated}, {"where", where_text(r)},
          {"out_dir", r.out_dir}, {"out_dir_exists", folder_exists(r.out_dir)},
          {"pid", r.process.pid > 0 ? nlohmann::json(r.process.pid) : nlohmann::json(nullptr)},
          {"output_tokens_per_s", optional_json(r.output_tokens_per_s)},
          {"ttft_p50_ms", optional_json(r.ttft_p50_ms)}, {"cost_usd", optional_json(r.cost_usd)}};
}

}  // namespace

std::vector<HistoryEntry> history_runs(const HistoryQuery& query, std::string& error) {
  const std::string dir = default_state_dir();
  if (::access((dir + "/history.db").c_str(), F_OK) != 0) {
    error = "no run recorded yet: the run history " + dir + "/history.db does not exist (runs of the runara command are "
            "recorded there from their start; RUNARA_STATE_DIR moves it)";
    return {};
  }
  try {
    std::vector<HistoryEntry> runs = RunHistory(dir).list(query);
    for (auto& r : runs) r = as_seen_now(std::move(r));  // "running" rows whose process is gone: killed
    return runs;
  } catch (const std::exception& e) {
    error = e.what();
    return {};
  }
}

int runs_command(int argc, char** argv) {
  HistoryQuery query;
  query.limit = 20;
  bool json = false;
  CommandLineParser parser(kUsage);
  parser
      .option("--script", [&](const std::string& v) {
        return v.empty() ? "--script expects a script's path or name, got ''" : (query.script = v, std::string());
      })
      .option("--limit", [&](const std::string& v) {
        char* end = nullptr;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 0 || n > 1000000) return "--limit expects a whole number >= 0, got '" + v + "'";
        return query.limit = static_cast<int>(n), std::string();
      })
      .flag("--real", [&] { query.kind = HistoryQuery::Kind::real; })
      .flag("--sim", [&] { query.kind = HistoryQuery::Kind::simulated; })
      .flag("--json", [&] { json = true; });
  if (int status = parser.parse_or_status(argc, argv, 2, "runara runs", kUsage); status >= 0) return status;
  std::string error;
  const auto runs = history_runs(query, error);
  if (!error.empty() && runs.empty()) {
    // Nothing recorded yet is not a failure of `runs`: the listing is just empty.
    const bool none_yet = error.rfind("no run recorded yet", 0) == 0;
    if (json && none_yet) std::puts("[]");
    std::fprintf(stderr, "runara runs: %s\n", visible(error).c_str());
    return none_yet ? 0 : 1;
  }
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : runs) out.push_back(row_json(r));
    std::printf("%s\n", out.dump(2, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  if (runs.empty()) {
    std::printf("no runs%s in the history\n", query.script.empty() ? "" : (" of " + visible(query.script, LineFeeds::show)).c_str());
    return 0;
  }
  // The WHERE column as wide as its longest entry (an endpoint's URL), within reason.
  int where_width = 5;
  for (const auto& r : runs) where_width = std::max(where_width, std::min(48, static_cast<int>(visible(where_text(r), LineFeeds::show).size())));
  std::printf("%-9s %-19s %-12s %-*s %-32s %10s %9s %9s  %s\n", "RUN", "STARTED (UTC)", "STATUS", where_width, "WHERE", "SCRIPT",
              "OUT TOK/S", "TTFT P50", "COST", "FOLDER");
  bool killed = false;
  for (const auto& r : runs) {
    killed = killed || r.status == kKilled;
    std::string folder = r.out_dir.empty() ? "(none)" : visible(r.out_dir, LineFeeds::show);
    if (!r.out_dir.empty() && !folder_exists(r.out_dir)) folder = "(missing) " + folder;
    std::printf("%-9s %-19s %-12s %-*s %-32s %10s %9s %9s  %s\n", visible(r.run_id, LineFeeds::show).c_str(),
                when(r.start_unix).c_str(),
                visible(r.status + (r.exit_code ? " " + std::to_string(r.exit_code) : ""), LineFeeds::show).c_str(),
                where_width, visible(where_text(r), LineFeeds::show).c_str(), visible(r.script, LineFeeds::show).c_str(), figure(r.output_tokens_per_s, "%.1f").c_str(),
                r.ttft_p50_ms ? (figure(r.ttft_p50_ms, "%.1f") + "ms").c_str() : "-",
                r.cost_usd ? ("$" + figure(r.cost_usd, "%.4f")).c_str() : "-", folder.c_str());
  }
  // Said once under the table: "killed" is a reading of a row, not an ending runara recorded.
  if (killed) {
    std::printf("killed: the run ended without a record (SIGKILL, a crash, the machine lost); shown is what was "
                "known as it ran; its run.log may say more\n");
  }
  return 0;
}

}  // namespace runara::cli
