// Redaction of a JSON value: every string in it, keys included, passed through `redact` (a run's
// secrets become [NAME]). For results a primitive builds outside Lua before they are written.
//
// Contract: a pure function of its arguments, any thread; the value is copied, never changed.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace runara {

nlohmann::json redact_json(const nlohmann::json& value, const std::function<std::string(std::string_view)>& redact);

}  // namespace runara
