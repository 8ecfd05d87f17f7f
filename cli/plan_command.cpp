#include "plan_command.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "cli_options.hpp"
#include "signals.hpp"
#include "sim_mode.hpp"

namespace runara::cli {

namespace {

// A rehearsal's clock: boots, downloads and token generation run at this fraction of real time.
constexpr double kTimeScale = 0.02;

// A message on one line, at most `max` bytes (a failed rehearsal's error may carry a log's tail).
// A script's text (its error, the names it chose) on one terminal line: nothing in it a terminal
// would act on (base/text.hpp's visible(), as for every other line a script reaches).
std::string one_line(std::string text, std::size_t max) {
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.size() > max) text = text.substr(0, max) + "...";
  return visible(text, LineFeeds::show);
}

std::string money(double usd) {
  char b[32];
  std::snprintf(b, sizeof b, "$%.2f", usd);
  return b;
}

void print_machines(const std::vector<sim::SimulatedDroplet>& created, int peak) {
  if (created.empty()) {
    std::printf("It creates no machine.\n");
    return;
  }
  std::printf("It creates %zu machine%s (at most %d at once):\n", created.size(), created.size() == 1 ? "" : "s", peak);
  for (const auto& d : created)
    std::printf("  %-22s %-6s image %-18s %s/h\n", one_line(d.size_slug, 100).c_str(), one_line(d.region_slug, 100).c_str(),
                one_line(d.image_slug, 100).c_str(), money(d.price_hourly).c_str());
}

void print_worst_case(const std::vector<sim::SimulatedDroplet>& created, const Options& o) {
  if (created.empty()) return;
  double per_hour = 0;
  for (const auto& d : created) per_hour += d.price_hourly;
  const double hours = o.max_runtime_s / 3600;
  const double worst = per_hour * hours;
  std::printf("Worst case: %s (every machine alive until the %.1f h deadline, --max-runtime %.0f)", money(worst).c_str(),
              hours, o.max_runtime_s);
  if (worst > o.cloud.budget_usd)
    std::printf("; --budget %s refuses any create that would pass it, so at most %s", money(o.cloud.budget_usd).c_str(),
                money(o.cloud.budget_usd).c_str());
  std::printf(".\n");
}

void print_permissions(const Options& o, const std::set<std::string>& denied) {
  std::vector<std::string> given;
  for (const auto& p : o.permissions.read_paths) given.push_back("--allow-read " + p);
  for (const auto& h : o.permissions.hosts) given.push_back("--allow-host " + h);
  for (const auto& e : o.permissions.env) given.push_back("--allow-env " + e);
  for (const auto& [name, value] : o.secrets) given.push_back("--secret " + name);
  std::printf("Permissions:");
  for (std::size_t i = 0; i < given.size(); ++i) std::printf("%s %s", i ? "," : "", given[i].c_str());
  std::printf(given.empty() ? " none granted; it reaches only its own folder and its own machines\n" : " (granted here)\n");
  for (const auto& grant : denied) {
    std::printf("  it asked for what only %s allows (not granted here)\n", one_line(grant, 300).c_str());
  }
}

}  // namespace

int plan_command(int argc, char** argv) {
  CommandLine command;
  if (std::string error = parse_command_line(argc - 1, argv + 1, command); !error.empty()) {
    std::fprintf(stderr, "runara plan: %s\n", error.c_str());
    return 2;
  }
  if (command.mode != CommandLine::Mode::script || command.script == "-") {
    std::fprintf(stderr, "usage: runara plan [OPTIONS] SCRIPT [key=value ...]\n");
    return 2;
  }
  // A plan runs nothing anywhere real: with --on the script would log into that machine (or load
  // that server) for real, so --on is refused rather than rehearsed.
  if (!command.options.on.host.empty() || !command.options.on.endpoint.empty()) {
    std::fprintf(stderr, "runara plan: --on is not rehearsed: a plan never logs into your machine or loads your server; "
                         "leave --on out to see what the script creates on droplets\n");
    return 2;
  }
  Options& o = command.options;
  const Options asked = o;  // what the real run would be given, before the simulator's settings
  const std::string out = std::filesystem::temp_directory_path() / ("runara-plan-" + std::to_string(::getpid()));
  o.out_dir = out;
  o.quiet = true;
  o.cloud.guardian_executable = own_executable();
  std::string error;
  // A plan is for scripts nobody has vouched for yet: their machines' commands would run on this
  // computer, so the simulated machines refuse them; the plan reports what happened until then.
  auto cloud = start_simulated_cloud(o, own_executable(), error, kTimeScale, false);
  if (!cloud) {
    std::fprintf(stderr, "runara plan: %s\n", error.c_str());
    return 2;
  }
  std::set<std::string> denied;
  std::string last_log;
  Events events;
  events.print = [](std::string_view) {};
  events.log = [&last_log](std::string_view line) { last_log = line; };
  events.progress = [](std::string_view) {};
  // A script can ask for a million paths: the plan lists the first hundred, and says so.
  events.denied = [&denied](std::string_view grant) {
    if (denied.size() < 100) denied.insert(std::string(grant.substr(0, 300)));
  };
  const auto started = std::chrono::steady_clock::now();
  Outcome outcome;
  {
    Runtime runtime(o, events);
    install_signal_handlers(runtime);
    outcome = runtime.run_file(command.script);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("Plan for %s, rehearsed on the simulated cloud in %.1f s%s\n", command.script.c_str(), seconds,
              outcome.exit == Exit::ok
                  ? ": it ran to the end"
                  : (" until: " + one_line(outcome.message, 400) +
                     "\n(a plan runs no command on the machines, so a script that needs their output stops early)")
                        .c_str());
  print_machines(cloud->created(), cloud->peak_machines());
  print_worst_case(cloud->created(), asked);
  print_permissions(asked, denied);
  std::printf("Rehearse it in full (real time, reports written, $0): runara --sim %s\n", command.script.c_str());
  std::error_code ignored;
  std::filesystem::remove_all(out, ignored);
  return outcome.exit == Exit::ok ? 0 : static_cast<int>(outcome.exit);
}

}  // namespace runara::cli
