// The deadline tag of a droplet; see deadline_tag.hpp for the contract.
#include "cloud/deadline_tag.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace runara {

namespace {

// 12 digits reach the year 33658: enough, and far from std::int64_t's overflow.
constexpr std::size_t kMaxDigits = 12;

}  // namespace

std::string deadline_tag(double unix_seconds) {
  const auto seconds = static_cast<std::int64_t>(std::ceil(std::max(0.0, unix_seconds)));
  return std::string(kDeadlineTagPrefix) + std::to_string(seconds);
}

std::optional<double> parse_deadline_tag(std::string_view tag) {
  if (tag.substr(0, kDeadlineTagPrefix.size()) != kDeadlineTagPrefix) return std::nullopt;
  const std::string_view digits = tag.substr(kDeadlineTagPrefix.size());
  if (digits.empty() || digits.size() > kMaxDigits) return std::nullopt;
  std::int64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return static_cast<double>(value);
}

std::optional<double> droplet_deadline(const nlohmann::json& droplet) {
  if (!droplet.is_object()) return std::nullopt;
  const auto tags = droplet.find("tags");
  if (tags == droplet.end() || !tags->is_array()) return std::nullopt;
  std::optional<double> latest;
  for (const auto& tag : *tags) {
    if (!tag.is_string()) continue;
    if (auto d = parse_deadline_tag(tag.get_ref<const std::string&>()); d && (!latest || *d > *latest)) latest = d;
  }
  return latest;
}

}  // namespace runara
