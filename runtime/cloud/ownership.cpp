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

Status check_key_owned(const nlohmann::json& key, const std::string& name, const std::string& fingerprint) {
  if (!key.is_object()) return Error{"the API answered no key"};
  if (key.value("fingerprint", "") != fingerprint) return Error{"its fingerprint is not the one the run recorded"};
  if (key.value("name", "") != name) return Error{"its name is not the one the run recorded (" + name + ")"};
  return {};
}

}  // namespace runara
