// The droplet sizes a script sees (droplet.sizes()): DigitalOcean's /v2/sizes catalogue cut to
// the fields a script chooses by (slug, prices, vCPUs, memory, disk, availability, regions, and
// the GPU's count, model and memory), optionally only the GPU sizes.
//
// Contract: a pure function of the API's JSON; missing fields read as zero or empty.
#pragma once

#include <nlohmann/json.hpp>

namespace runara {

nlohmann::json size_catalog(const nlohmann::json& api_sizes, bool gpu_only);

}  // namespace runara
