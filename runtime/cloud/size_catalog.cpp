#include "cloud/size_catalog.hpp"

namespace runara {

namespace {

nlohmann::json size_entry(const nlohmann::json& s) {
  nlohmann::json out = {{"slug", s.value("slug", "")},
                        {"price_hourly", s.value("price_hourly", 0.0)},
                        {"price_monthly", s.value("price_monthly", 0.0)},
                        {"vcpus", s.value("vcpus", 0)},
                        {"memory_mb", s.value("memory", 0)},
                        {"disk_gb", s.value("disk", 0)},
                        {"available", s.value("available", false)},
                        {"regions", s.value("regions", nlohmann::json::array())}};
  if (s.contains("gpu_info") && s["gpu_info"].is_object()) {
    const auto& g = s["gpu_info"];
    const auto vram = g.value("vram", nlohmann::json::object());
    out["gpu"] = {{"count", g.value("count", 0)}, {"model", g.value("model", "")}, {"vram_gb", vram.value("amount", 0)}};
  }
  return out;
}

}  // namespace

nlohmann::json size_catalog(const nlohmann::json& api_sizes, bool gpu_only) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : api_sizes) {
    if (!gpu_only || s.contains("gpu_info")) list.push_back(size_entry(s));
  }
  return list;
}

}  // namespace runara
