#include "cloud/reaper.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <set>
#include <sys/stat.h>

#include <uv.h>

#include "base/text.hpp"
#include "cloud/deadline_tag.hpp"
#include "cloud/do_client.hpp"
#include "cloud/expired_runs.hpp"
#include "cloud/leftover_survey.hpp"
#include "cloud/ownership.hpp"
#include "cloud/ledger.hpp"
#include "cloud/run_cleanup.hpp"
#include "curl/http_client.hpp"

namespace runara {

namespace {

// Without --yes, asks at the terminal before destroying `count` things; -1 to go on, otherwise
// the exit status: 2 without a terminal to ask at, 1 when the answer is not yes.
int ask_to_destroy(bool yes, std::size_t count, const char* what) {
  if (yes) return -1;
  if (!isatty(STDIN_FILENO)) {
    std::fprintf(stderr, "runara reap: not a terminal; add --yes to destroy these without asking\n");
    return 2;
  }
  std::printf("destroy %zu %s(s)? [y/N] ", count, what);
  std::fflush(stdout);
  std::string answer;
  std::getline(std::cin, answer);
  return answer == "y" || answer == "Y" || answer == "yes" ? -1 : 1;
}

const std::string kRunTagPrefix = "runara:run-";

// Text from the API or the ledger (names, tags, regions, statuses, the API's error messages) as
// one terminal line: a droplet name chosen by a script or answered by the API cannot drive the
// terminal or start a line of its own (base/text.hpp's visible(), as for all of runara's output).
std::string shown(const std::string& text) { return visible(text, LineFeeds::show); }

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

// A row's id at the API: a droplet's or key's number, a VPC's or firewall's UUID; "-" for none.
std::string id_text(const Leftover& l) {
  if (!l.remote_id.empty()) return l.remote_id;
  return l.id ? std::to_string(l.id) : "-";
}

std::string price_text(const std::optional<double>& price) {
  char text[32];
  if (!price) return "?";
  std::snprintf(text, sizeof text, "%.2f", *price);
  return text;
}

void print_table(const std::vector<Leftover>& list, const std::set<std::string>& live) {
  std::printf("%-10s %-8s %-12s %-34s %-12s %-20s %7s  %s\n", "RUN", "ALIVE", "DROPLET", "NAME", "STATUS", "SIZE",
              "$/H", "SINCE");
  for (const auto& l : list) {
    std::printf("%-10s %-8s %-12s %-34s %-12s %-20s %7s  %s (%s)\n", shown(l.run_id).c_str(),
                live.count(l.run_id) ? "yes" : "no", shown(id_text(l)).c_str(), shown(l.name).c_str(),
                shown(l.status).c_str(), shown(l.size).c_str(), price_text(l.price_hourly).c_str(),
                time_text(l.created_at).c_str(), shown(l.source).c_str());
  }
}

std::string iso_time(double unix_seconds) {
  char text[32];
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

void print_json(const Survey& survey, const std::vector<Leftover>& list, const std::set<std::string>& live) {
  nlohmann::json resources = nlohmann::json::array();
  for (const auto& l : list) {
    const nlohmann::json id = !l.remote_id.empty() ? nlohmann::json(l.remote_id) : l.id ? nlohmann::json(l.id) : nlohmann::json();
    resources.push_back({{"id", id},
                         {"kind", l.kind},
                         {"run_id", l.run_id},
                         {"run_alive", live.count(l.run_id) > 0},
                         {"name", l.name},
                         {"size", l.size},
                         {"region", l.region},
                         {"status", l.status},
                         {"checked", l.checked},
                         {"runara_tagged", !l.foreign},
                         {"created_at", l.created_at > 0 ? nlohmann::json(iso_time(l.created_at)) : nlohmann::json()},
                         {"price_hourly", l.price_hourly ? nlohmann::json(*l.price_hourly) : nlohmann::json()},
                         {"source", l.source}});
  }
  nlohmann::json out = {{"api", survey.api_base},
                        {"checked", survey.error.empty()},
                        {"error", survey.error.empty() ? nlohmann::json() : nlohmann::json(survey.error)},
                        {"elsewhere", survey.elsewhere},
                        {"resources", resources}};
  // ASCII only: control characters (C1 ones included) and everything else outside ASCII come out
  // as JSON escapes, so the API's text cannot drive a terminal showing this either; bytes that are
  // not UTF-8 (an API's error text) as U+FFFD instead of an exception that would cost the listing.
  std::printf("%s\n", out.dump(2, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
}

// A live run's droplets with the run's own key: the line a user types to step in by hand.
void print_step_in(const std::vector<Leftover>& list, const std::set<std::string>& live) {
  for (const auto& key : list) {
    if (key.kind != "ssh_key" || key.private_key_path.empty() || !live.count(key.run_id)) continue;
    for (const auto& d : list) {
      if (d.kind == "droplet" && d.run_id == key.run_id && !d.ip.empty() && !d.foreign) {
        std::printf("step in: ssh -i %s root@%s   # %s\n", shown(key.private_key_path).c_str(), shown(d.ip).c_str(),
                    shown(d.name).c_str());
      }
    }
  }
}

// Rows of other endpoints or accounts are never acted on here; say where they are.
void note_elsewhere(const char* command, const Survey& survey) {
  for (const auto& place : survey.elsewhere) {
    std::fprintf(stderr, "runara %s: the ledger also holds %s: not looked at (set RUNARA_DO_API_URL and the "
                 "token for that API to see them)\n", command, shown(place).c_str());
  }
}

std::unique_ptr<ApiSession> session_for(const ReapOptions& options) {
  if (options.token.empty()) return nullptr;
  return std::make_unique<ApiSession>(options.api_base, options.token);
}

struct ReapOutcome {
  int incomplete = 0;  // runs whose machines could not all be confirmed gone
  int refused = 0;     // ledger rows left alone: not shown to be runara's
};

// One RunCleanup per run, all at once. Every id it did not create itself is checked for the
// run's tag before it is deleted (run_cleanup.hpp).
ReapOutcome destroy_runs(ApiSession& api, Ledger& ledger, const std::string& account,
                         const std::vector<Leftover>& targets) {
  std::set<std::string> runs;
  for (const auto& t : targets) runs.insert(t.run_id);
  ReapOutcome outcome;
  std::size_t left = runs.size();
  CleanupOptions options;
  options.account = account;
  std::vector<std::unique_ptr<RunCleanup>> cleanups;
  auto say = [](const std::string& line) { std::printf("%s\n", shown(line).c_str()); };
  for (const auto& run : runs) {
    cleanups.push_back(std::make_unique<RunCleanup>(api.loop(), api.client(), ledger, run, kRunTagPrefix + run,
                                                    options, say));
    cleanups.back()->start([&, run](CleanupReport report) {
      for (const auto& line : report.refused) std::printf("NOT TOUCHED %s (run %s)\n", shown(line).c_str(), shown(run).c_str());
      outcome.refused += static_cast<int>(report.refused.size());
      if (report.complete() && report.refused.empty()) {
        ledger.finish_run(run, RunStatus::crashed);
      } else if (!report.complete()) {
        ++outcome.incomplete;
        for (const auto& line : report.remaining) {
          std::printf("COULD NOT DESTROY %s (run %s)\n", shown(line).c_str(), shown(run).c_str());
        }
      }
      if (--left == 0) uv_stop(api.loop());
    });
  }
  if (left > 0) api.run();
  return outcome;
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
    for (const auto& r : ledger.pending_resources_all()) {
      if (!live.count(r.run_id)) ++per_run[r.run_id];
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
  const auto live = live_runs(ledger);
  auto api = session_for(options);
  const Survey survey = survey_leftovers(ledger, options.api_base, api.get());
  const auto all = select(options, survey.rows, {});
  if (options.json) {
    print_json(survey, all, live);
  } else if (!all.empty()) {
    print_table(all, live);
  } else if (survey.error.empty()) {
    std::printf("no machines left by runara runs at %s\n", shown(survey.api_base).c_str());
  }
  if (!options.json) print_step_in(all, live);
  note_elsewhere("ls", survey);
  if (!survey.error.empty()) {
    std::fprintf(stderr, "runara ls: could not check what is left: %s\n", shown(survey.error).c_str());
    return 1;
  }
  return 0;
}

int reap_leftovers(const ReapOptions& options) {
  if (options.expired) return reap_expired(options);
  Ledger ledger(options.state_dir);
  const auto live = live_runs(ledger);
  auto api = session_for(options);
  const Survey survey = survey_leftovers(ledger, options.api_base, api.get());
  note_elsewhere("reap", survey);
  std::vector<Leftover> targets, foreign;
  for (auto& l : select(options, survey.rows, live)) (l.foreign ? foreign : targets).push_back(std::move(l));
  for (const auto& l : foreign) {
    const std::string what = l.kind == "droplet" ? id_text(l) : l.kind + " " + id_text(l);
    std::printf("NOT TOUCHED %s (%s): %s\n", shown(what).c_str(), shown(l.name).c_str(), shown(l.status).c_str());
  }
  if (!survey.error.empty()) {
    if (!targets.empty()) print_table(targets, live);
    std::fprintf(stderr, "runara reap: could not check what is left: %s\n", shown(survey.error).c_str());
    return 1;
  }
  if (targets.empty()) {
    std::printf("nothing to reap\n");
    return foreign.empty() ? 0 : 1;
  }
  print_table(targets, live);
  if (const int refused = ask_to_destroy(options.yes, targets.size(), "machine"); refused >= 0) return refused;
  const ReapOutcome outcome = destroy_runs(*api, ledger, survey.account, targets);
  if (outcome.incomplete) {
    std::printf("reap incomplete: run it again later\n");
  } else if (outcome.refused || !foreign.empty()) {
    std::printf("all of runara's reaped; the ledger rows marked NOT TOUCHED were left alone\n");
  } else {
    std::printf("all reaped\n");
  }
  return outcome.incomplete || outcome.refused || !foreign.empty() ? 1 : 0;
}

// The account's listing, not the ledger, decides here: the computer that started the runs (and
// its ledger and guardian) may be gone. A run is destroyed whole, by the same RunCleanup as
// `runara reap` (which re-checks the run tag on every droplet before deleting it), and only when
// each of its listed droplets carries a deadline tag that has passed (expired_runs.hpp).
int reap_expired(const ReapOptions& options) {
  auto api = session_for(options);
  if (!api) {
    std::fprintf(stderr, "runara reap --expired: no DigitalOcean token (set DIGITALOCEAN_TOKEN), so nothing was "
                         "checked\n");
    return 1;
  }
  const DoResult account = api->get_account();
  if (!account.ok) {
    std::fprintf(stderr, "runara reap --expired: could not check what has expired: %s\n",
                 shown(account.status == 401 || account.status == 403 ? "the API refused the token (" + account.error + ")"
                                                                       : "could not reach the API (" + account.error + ")")
                     .c_str());
    return 1;
  }
  const DoResult list = api->list_droplets("runara");
  if (!list.ok) {
    std::fprintf(stderr, "runara reap --expired: could not list the account's runara droplets: %s\n",
                 shown(list.error).c_str());
    return 1;
  }
  const double now = static_cast<double>(std::time(nullptr));
  ExpiredSelection selection =
      select_expired(list.body.value("droplets", nlohmann::json::array()), now, options.grace_s, options.run_id);
  // A run still alive on this computer is its own runtime's (and guardian's) to end, deadline or not.
  Ledger ledger(options.state_dir);
  const auto live = live_runs(ledger);
  std::vector<ExpiredDroplet> reap;
  for (auto& e : selection.reap) {
    if (live.count(e.run_id)) {
      e.why_kept = "its run " + e.run_id + " is still running on this computer";
      selection.kept.push_back(std::move(e));
    } else {
      reap.push_back(std::move(e));
    }
  }
  for (const auto& e : selection.kept) {
    const auto id = e.droplet.value("id", std::int64_t{0});
    std::printf("NOT TOUCHED %lld (%s): %s\n", static_cast<long long>(id),
                shown(json_text(e.droplet, "name")).c_str(), shown(e.why_kept).c_str());
  }
  if (reap.empty()) {
    std::printf("nothing expired\n");
    return 0;
  }
  std::vector<Leftover> targets;
  for (const auto& e : reap) {
    targets.push_back(leftover_from_api(e.droplet));
    std::printf("EXPIRED %lld (%s) of run %s: deadline %s passed\n", static_cast<long long>(targets.back().id),
                shown(targets.back().name).c_str(), shown(e.run_id).c_str(), iso_time(*e.deadline).c_str());
  }
  if (const int refused = ask_to_destroy(options.yes, targets.size(), "expired machine"); refused >= 0) return refused;
  const std::string uuid = account.body.value("account", nlohmann::json::object()).value("uuid", "");
  const ReapOutcome outcome = destroy_runs(*api, ledger, uuid, targets);
  if (outcome.incomplete) {
    std::printf("reap incomplete: run it again later\n");
    return 1;
  }
  std::printf("all expired reaped\n");
  return outcome.refused ? 1 : 0;
}

}  // namespace runara
