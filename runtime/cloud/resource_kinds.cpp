// The resource kinds; see resource_kinds.hpp.
#include "cloud/resource_kinds.hpp"

#include <string>

namespace runara {

const std::vector<ResourceKind>& resource_kinds() {
  static const std::vector<ResourceKind> kinds = {
      {"firewall", "/v2/firewalls", "firewall", "firewalls", "fw", 1, false},
      {"vpc", "/v2/vpcs", "vpc", "vpcs", "vpc", 2, true},
  };
  return kinds;
}

const ResourceKind* find_resource_kind(std::string_view kind) {
  for (const auto& k : resource_kinds()) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

std::string resource_name(const ResourceKind& kind, std::string_view run_id) {
  return "runara-" + std::string(run_id) + "-" + std::string(kind.name_suffix);
}

}  // namespace runara
