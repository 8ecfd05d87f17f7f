#include "cloud/unknown_size.hpp"

#include <algorithm>
#include <vector>

#include "base/did_you_mean.hpp"

namespace runara {

namespace {

// Sizes of the same family: those sharing the given slug's first characters ("gpu-h1",
// "s-2vcp"), at most six, in the catalogue's order sorted by name.
std::vector<std::string> same_family(const std::string& size, const std::vector<std::string>& slugs) {
  const std::size_t prefix = std::min<std::size_t>(6, size.size());
  std::vector<std::string> close;
  for (const auto& slug : slugs)
    if (slug.size() >= prefix && slug.compare(0, prefix, size, 0, prefix) == 0) close.push_back(slug);
  std::sort(close.begin(), close.end());
  if (close.size() > 6) close.resize(6);
  return close;
}

}  // namespace

std::string unknown_size_message(const std::string& size, const nlohmann::json& sizes) {
  std::vector<std::string> slugs;
  if (sizes.is_array()) {
    for (const auto& s : sizes)
      if (s.is_object() && s.contains("slug") && s["slug"].is_string()) slugs.push_back(s["slug"].get<std::string>());
  }
  std::string text = "unknown size '" + size + "': the cloud's size list (GET /v2/sizes, droplet.sizes()) does not have it" +
                     did_you_mean(size, slugs);
  const std::vector<std::string> close = same_family(size, slugs);
  if (!close.empty()) {
    text += "; close ones:";
    for (std::size_t i = 0; i < close.size(); ++i) text += (i ? ", " : " ") + close[i];
  }
  return text + ". For a contract size, state its price with --assume-price " + size + "=USD_PER_HOUR";
}

}  // namespace runara
