// What to say when a droplet size is not in the cloud's catalogue (GET /v2/sizes): a setup
// mistake, named with the sizes closest to it, so that a typo ("gpu-h100x1-80gbb") is fixed from
// the message alone.
//
// Contract. Pure, any thread. `sizes` is /v2/sizes' list (objects with "slug"); anything else in
// it is ignored.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace runara {

// "unknown size 'X': the cloud's size list (GET /v2/sizes) does not have it (did you mean 'Y'?);
// close ones: ...; for a contract size, state its price with --assume-price X=USD_PER_HOUR".
std::string unknown_size_message(const std::string& size, const nlohmann::json& sizes);

}  // namespace runara
