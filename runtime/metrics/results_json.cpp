#include "metrics/results_json.hpp"

namespace runara::metrics {

nlohmann::json scrape_json(const PromParse& p) {
  nlohmann::json families = nlohmann::json::object();
  for (const auto& [name, f] : p.families)
    families[name] = {{"type", f.type}, {"help", f.help}, {"samples", nlohmann::json::array()}};
  for (const auto& s : p.samples) {
    nlohmann::json labels = nlohmann::json::object();
    for (const auto& [k, v] : s.labels) labels[k] = v;
    families[s.family]["samples"].push_back({{"name", s.name}, {"labels", std::move(labels)}, {"value", s.value}});
  }
  nlohmann::json values = nlohmann::json::object();
  for (const auto& [name, v] : prometheus_totals(p)) values[name] = v;
  return {{"values", std::move(values)}, {"families", std::move(families)}};
}

}  // namespace runara::metrics
