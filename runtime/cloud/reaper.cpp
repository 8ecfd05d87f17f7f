#include "reaper.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <set>
#include <sys/stat.h>

#include <uv.h>

#include "cloud/do_client.hpp"
#include "cloud/ledger.hpp"
#include "cloud/run_cleanup.hpp"
#include "net/http_client.hpp"

namespace runara {

namespace {

const std::string kRunTagPrefix = "runara:run-";

bool process_alive(std::int64_t pid) { return pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

// Runs that are still in progress on this machine: never reaped unless named.
std::set<std::string> live_runs(Ledger& ledger) {
  std::set<std::string> live;
  for (const auto& run : ledger.runs()) {
    if (run.status == RunStatus::running && process_alive(run.pid)) live.insert(run.run_id);
  }
  return live;
}

std::string time_text(double unix_seconds) {
  char text[32];
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%MZ", std::gmtime(&t));
  return text;
}

struct Leftover {
  std::string run_id, name, state, size, source;
  std::int64_t id = 0;
  double created_at = 0;
  double price = 0;
};

// Everything found, by the ledger and by the account's runara tag (when a token is at hand).
std::vector<Leftover> find_leftovers(const ReapOptions& options, Ledger& ledger, std::string& api_error) {
  std::vector<Leftover> out;
  std::set<std::int64_t> known;
  for (const auto& e : ledger.pending_all()) {
    out.push_back({e.run_id, e.name, to_string(e.state), e.size, "ledger", e.droplet_id.value_or(0), e.created_at,
                   e.price_hourly});
    if (e.droplet_id) known.insert(*e.droplet_id);
  }
  if (options.token.empty()) {
    api_error = "no DigitalOcean token, so the account was not searched for runara-tagged machines";
    return out;
  }
  uv_loop_t loop;
  uv_loop_init(&loop);
  {
    HttpClient http(&loop);
    DoClient client(http, options.api_base, options.token);
    client.list_droplets("runara", [&](DoResult result) {
      if (!result.ok) api_error = result.error;
      for (const auto& d : result.body.value("droplets", nlohmann::json::array())) {
        const std::int64_t id = d.value("id", std::int64_t{0});
        if (known.count(id)) continue;
        std::string run;
        for (const auto& tag : d.value("tags", nlohmann::json::array())) {
          const std::string t = tag.get<std::string>();
          if (t.rfind(kRunTagPrefix, 0) == 0) run = t.substr(kRunTagPrefix.size());
        }
        std::tm tm{};
        const std::string created = d.value("created_at", "");
        double created_at = 0;
        if (strptime(created.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) created_at = static_cast<double>(timegm(&tm));
        out.push_back({run, d.value("name", ""), d.value("status", ""), d.value("size_slug", ""), "account tag", id,
                       created_at, d.contains("size") ? d["size"].value("price_hourly", 0.0) : 0.0});
      }
      http.close({});
    });
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return out;
}

std::vector<Leftover> select(const ReapOptions& options, std::vector<Leftover> all, const std::set<std::string>& live) {
  std::vector<Leftover> out;
  const double now = static_cast<double>(std::time(nullptr));
  for (auto& l : all) {
    if (!options.run_id.empty() && l.run_id != options.run_id) continue;
    if (options.run_id.empty() && live.count(l.run_id)) continue;
    if (options.older_than_s > 0 && now - l.created_at < options.older_than_s) continue;
    out.push_back(std::move(l));
  }
  return out;
}

void print_table(const std::vector<Leftover>& list, const std::set<std::string>& live) {
  std::printf("%-10s %-8s %-12s %-34s %-12s %-20s %7s  %s\n", "RUN", "ALIVE", "DROPLET", "NAME", "STATE", "SIZE",
              "$/H", "SINCE");
  for (const auto& l : list) {
    std::printf("%-10s %-8s %-12s %-34s %-12s %-20s %7.2f  %s (%s)\n", l.run_id.c_str(), live.count(l.run_id) ? "yes" : "no",
                l.id ? std::to_string(l.id).c_str() : "-", l.name.c_str(), l.state.c_str(), l.size.c_str(), l.price,
                time_text(l.created_at).c_str(), l.source.c_str());
  }
}

}  // namespace

double parse_duration(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (!end || end == text.c_str() || value < 0) return -1;
  const std::string unit = end;
  if (unit.empty() || unit == "s") return value;
  if (unit == "m") return value * 60;
  if (unit == "h") return value * 3600;
  if (unit == "d") return value * 86400;
  return -1;
}

std::string leftover_warning(const std::string& state_dir) {
  struct stat st {};
  if (stat((state_dir + "/ledger.db").c_str(), &st) != 0) return {};
  try {
    Ledger ledger(state_dir);
    const auto live = live_runs(ledger);
    std::map<std::string, int> per_run;
    for (const auto& e : ledger.pending_all()) {
      if (!live.count(e.run_id)) ++per_run[e.run_id];
    }
    if (per_run.empty()) return {};
    std::string runs;
    int total = 0;
    for (const auto& [run, n] : per_run) {
      runs += (runs.empty() ? "" : ", ") + run;
      total += n;
    }
    return "earlier runs (" + runs + ") left " + std::to_string(total) +
           " machine(s) that may still be billing: see `runara ls`, destroy them with `runara reap`";
  } catch (const std::exception&) {
    return {};
  }
}

int list_leftovers(const ReapOptions& options) {
  Ledger ledger(options.state_dir);
  std::string api_error;
  const auto live = live_runs(ledger);
  const auto all = select(options, find_leftovers(options, ledger, api_error), {});
  if (!api_error.empty()) std::fprintf(stderr, "runara ls: %s\n", api_error.c_str());
  if (all.empty()) {
    std::printf("no machines left by runara runs\n");
    return 0;
  }
  print_table(all, live);
  return 0;
}

int reap_leftovers(const ReapOptions& options) {
  Ledger ledger(options.state_dir);
  std::string api_error;
  const auto live = live_runs(ledger);
  const auto targets = select(options, find_leftovers(options, ledger, api_error), live);
  if (!api_error.empty()) std::fprintf(stderr, "runara reap: %s\n", api_error.c_str());
  if (targets.empty()) {
    std::printf("nothing to reap\n");
    return api_error.empty() ? 0 : 1;
  }
  print_table(targets, live);
  if (options.token.empty()) {
    std::fprintf(stderr, "runara reap: set DIGITALOCEAN_TOKEN to destroy them\n");
    return 1;
  }
  if (!options.yes) {
    if (!isatty(STDIN_FILENO)) {
      std::fprintf(stderr, "runara reap: not a terminal; add --yes to destroy these without asking\n");
      return 2;
    }
    std::printf("destroy %zu machine(s)? [y/N] ", targets.size());
    std::fflush(stdout);
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") return 1;
  }
  std::set<std::string> runs;
  for (const auto& t : targets) runs.insert(t.run_id);
  uv_loop_t loop;
  uv_loop_init(&loop);
  int failures = 0;
  {
    HttpClient http(&loop);
    DoClient client(http, options.api_base, options.token);
    std::vector<std::unique_ptr<RunCleanup>> cleanups;
    std::size_t left = runs.size();
    auto say = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
    for (const auto& run : runs) {
      cleanups.push_back(std::make_unique<RunCleanup>(&loop, client, ledger, run, kRunTagPrefix + run,
                                                      CleanupOptions{}, say));
      cleanups.back()->start([&, run](CleanupReport report) {
        if (report.complete()) {
          ledger.finish_run(run, RunStatus::crashed);
        } else {
          ++failures;
          for (const auto& line : report.remaining) std::printf("COULD NOT DESTROY %s (run %s)\n", line.c_str(), run.c_str());
        }
        if (--left == 0) http.close({});
      });
    }
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  std::printf(failures ? "reap incomplete: run it again later\n" : "all reaped\n");
  return failures ? 1 : 0;
}

}  // namespace runara
