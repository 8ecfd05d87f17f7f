#include "run/record.hpp"

#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>

#include "guards/watchdog.hpp"

namespace runara {

namespace {

// The options a user gave on the command line (or a host set), by their flag names. Secret
// values and the cloud token are never here: only the secrets' names.
nlohmann::json flags_of(const Options& o) {
  nlohmann::json secrets = nlohmann::json::array();
  for (const auto& [name, value] : o.secrets) secrets.push_back(name);
  return {{"max_runtime_s", o.max_runtime_s},
          {"max_memory_bytes", o.max_memory_bytes},
          {"out", o.out_dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.out_dir)},
          {"allow_read", o.permissions.read_paths},
          {"allow_host", o.permissions.hosts},
          {"allow_env", o.permissions.env},
          {"allow_tag", o.permissions.tags},
          {"allow_vpc", o.permissions.vpcs},
          {"secrets", secrets},
          {"budget_usd", o.cloud.budget_usd},
          {"max_droplets", o.cloud.max_droplets},
          {"context", o.cloud.context.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.cloud.context)},
          {"assume_price", o.cloud.assumed_prices},
          {"quiet", o.quiet}};
}

nlohmann::json machines_json(const std::vector<RecordedMachine>& machines, double& total) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : machines) {
    total += m.cost_usd;
    out.push_back({{"name", m.name}, {"id", m.id}, {"size", m.size}, {"region", m.region},
                   {"price_hourly", m.price_hourly}, {"lifetime_s", m.lifetime_s}, {"cost_usd", m.cost_usd}});
  }
  return out;
}

}  // namespace

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string utc_text(double unix_seconds) {
  const auto whole = static_cast<std::time_t>(std::floor(unix_seconds));
  const int millis = static_cast<int>((unix_seconds - static_cast<double>(whole)) * 1000) % 1000;
  std::tm utc{};
  gmtime_r(&whole, &utc);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", text, millis);
  return out;
}

std::string run_status(Exit exit) {
  switch (exit) {
    case Exit::ok: return "ok";
    case Exit::watchdog: return "watchdog";
    case Exit::thresholds: return "thresholds";
    case Exit::hangup:
    case Exit::interrupted:
    case Exit::terminated: return "stopped";
    case Exit::script_error:
    case Exit::usage: break;
  }
  return "failed";
}

// Lua's messages put the location first ("chunk:12: text"); wrapped ones ("task 3 failed and
// was never joined: chunk:12: text") carry it later. The first "NAME:DIGITS:" wins.
std::string error_location(std::string_view message) {
  for (std::size_t colon = message.find(':'); colon != std::string_view::npos; colon = message.find(':', colon + 1)) {
    std::size_t end = colon + 1;
    while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
    if (end == colon + 1 || end >= message.size() || message[end] != ':') continue;
    std::size_t start = colon;
    while (start > 0 && message[start - 1] != ' ' && message[start - 1] != '\n' && message[start - 1] != '\t') --start;
    if (start == colon) continue;
    return std::string(message.substr(start, end - start));
  }
  return {};
}

Outcome merge_outcomes(Outcome run, Outcome end) {
  if (run.exit == Exit::ok) {
    end.out_dir = end.out_dir.empty() ? run.out_dir : end.out_dir;
    return end;
  }
  if (!end.message.empty() && end.message != run.message) run.message += "\n" + end.message;
  run.out_dir = end.out_dir;
  return run;
}

void RunRecorder::begin(const std::string& script, const Options& options) {
  start_unix_ = unix_now();
  start_mono_ = monotonic_seconds();
  script_ = script;
  args_ = options.args;
  params_ = nlohmann::json::object();
  for (const auto& a : options.args) {
    const std::size_t eq = a.find('=');
    if (eq != std::string::npos && eq != 0) params_[a.substr(0, eq)] = a.substr(eq + 1);
  }
  flags_ = flags_of(options);
}

nlohmann::json RunRecorder::finish(const Outcome& outcome) {
  const double duration = monotonic_seconds() - start_mono_;
  const double end_unix = start_unix_ + duration;  // one clock for both ends: no jumps
  double total = 0;
  nlohmann::json machines = machines_json(machine_source ? machine_source() : std::vector<RecordedMachine>{}, total);
  const bool failed = outcome.exit != Exit::ok;
  const std::string where = failed ? error_location(outcome.message) : "";
  return {{"status", run_status(outcome.exit)},
          {"exit_code", static_cast<int>(outcome.exit)},
          {"error", failed ? nlohmann::json(outcome.message) : nlohmann::json(nullptr)},
          {"error_location", where.empty() ? nlohmann::json(nullptr) : nlohmann::json(where)},
          {"runara_version", version()},
          {"script", script_.empty() ? nlohmann::json(nullptr) : nlohmann::json(script_)},
          {"args", args_},
          {"params", params_},
          {"flags", flags_},
          {"start_utc", utc_text(start_unix_)},
          {"start_unix", start_unix_},
          {"end_utc", utc_text(end_unix)},
          {"end_unix", end_unix},
          {"duration_s", duration},
          {"machines", machines},
          {"total_cost_usd", total}};
}

}  // namespace runara
