#include "base/redact_json.hpp"

namespace runara {

nlohmann::json redact_json(const nlohmann::json& value, const std::function<std::string(std::string_view)>& redact) {
  if (value.is_string()) return redact(value.get_ref<const std::string&>());
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : value) out.push_back(redact_json(item, redact));
    return out;
  }
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, item] : value.items()) out[redact(key)] = redact_json(item, redact);
    return out;
  }
  return value;
}

}  // namespace runara
