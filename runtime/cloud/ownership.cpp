// Ownership checks on the API's answers; see ownership.hpp for the contract.
#include "cloud/ownership.hpp"

#include <algorithm>

namespace runara {

Status check_droplet_owned(const nlohmann::json& droplet, const std::string& run_tag) {
  const auto tags = droplet.is_object() ? droplet.value("tags", nlohmann::json::array()) : nlohmann::json::array();
  const bool tagged = tags.is_array() && std::any_of(tags.begin(), tags.end(), [&](const nlohmann::json& t) {
                        return t.is_string() && t == run_tag;
                      });
  if (tagged) return {};
  return Error{"does not carry the tag " + run_tag};
}

std::string json_text(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Status check_resource_owned(const nlohmann::json& item, const std::string& kind, const std::string& name,
                            const std::string& run_tag) {
  if (!item.is_object()) return Error{"the API answered no " + kind};
  if (json_text(item, "name") != name) {
    return Error{"its name '" + json_text(item, "name") + "' is not the one the run recorded (" + name + ")"};
  }
  if (kind == "firewall" && !check_droplet_owned(item, run_tag).ok()) return Error{"it does not apply to the tag " + run_tag};
  return {};
}

Status check_key_owned(const nlohmann::json& key, const std::string& name, const std::string& fingerprint) {
  if (!key.is_object()) return Error{"the API answered no key"};
  if (key.value("fingerprint", "") != fingerprint) return Error{"its fingerprint is not the one the run recorded"};
  if (key.value("name", "") != name) return Error{"its name is not the one the run recorded (" + name + ")"};
  return {};
}

}  // namespace runara
