// Runs that are over by their droplets' deadline tags; see expired_runs.hpp for the contract.
#include "cloud/expired_runs.hpp"

#include <cmath>
#include <cstdint>
#include <ctime>
#include <map>

#include "cloud/deadline_tag.hpp"

namespace runara {

namespace {

const std::string kRunTagPrefix = "runara:run-";

std::string run_of(const nlohmann::json& droplet) {
  const auto tags = droplet.find("tags");
  if (tags == droplet.end() || !tags->is_array()) return {};
  for (const auto& tag : *tags) {
    if (tag.is_string() && tag.get_ref<const std::string&>().rfind(kRunTagPrefix, 0) == 0) {
      return tag.get<std::string>().substr(kRunTagPrefix.size());
    }
  }
  return {};
}

std::string utc(double unix_seconds) {
  char text[32];
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%SZ", &tm);
  return text;
}

}  // namespace

ExpiredSelection select_expired(const nlohmann::json& listed_droplets, double now, double grace_s,
                                const std::string& only_run) {
  ExpiredSelection out;
  if (!listed_droplets.is_array()) return out;
  // Per run: its droplets in listing order, and the first reason (if any) to keep the run whole.
  std::map<std::string, std::vector<ExpiredDroplet>> runs;
  std::map<std::string, std::string> run_kept;
  std::vector<std::string> order;
  for (const auto& d : listed_droplets) {
    if (!d.is_object()) continue;
    ExpiredDroplet e{d, run_of(d), droplet_deadline(d), {}};
    if (e.run_id.empty()) {
      e.why_kept = "no runara:run- tag: not a runara run's";
      out.kept.push_back(std::move(e));
      continue;
    }
    if (!only_run.empty() && e.run_id != only_run) continue;
    if (!e.deadline) {
      e.why_kept = "no deadline tag (made by a runara before deadline tags): judge it with runara reap --run or "
                   "--older-than";
    } else if (*e.deadline + grace_s >= now) {
      e.why_kept = "deadline " + utc(*e.deadline) + " not passed" +
                   (grace_s > 0 ? " (with " + std::to_string(static_cast<long long>(std::lround(grace_s))) +
                                      " s grace)"
                                : std::string());
    }
    if (!runs.count(e.run_id)) order.push_back(e.run_id);
    if (!e.why_kept.empty() && !run_kept.count(e.run_id)) run_kept[e.run_id] = e.why_kept;
    runs[e.run_id].push_back(std::move(e));
  }
  for (const auto& run : order) {
    const auto kept = run_kept.find(run);
    for (auto& e : runs[run]) {
      if (kept == run_kept.end()) {
        out.reap.push_back(std::move(e));
        continue;
      }
      if (e.why_kept.empty()) e.why_kept = "its run " + run + " has a droplet kept: " + kept->second;
      out.kept.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace runara
