// Small helpers for the fake DigitalOcean API: name/tag validation, time stamps, request ids,
// URL query encoding and SSH public key fingerprints. No HTTP, no state.
#pragma once

#include "base/text.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace runara::sim::fakedo {

// Droplet names: ^[a-zA-Z0-9]?[a-z0-9A-Z.\-]*[a-z0-9A-Z]$, at most 255 characters.
bool valid_droplet_name(std::string_view name);
// Tag names: ^[a-zA-Z0-9_\-\:]+$, at most 255 characters.
bool valid_tag_name(std::string_view name);

// "2024-09-30T15:23:36Z"
std::string iso8601(std::chrono::system_clock::time_point t);
std::int64_t unix_seconds(std::chrono::system_clock::time_point t);

// Random version-4 UUID text ("4d9d8375-3c56-4925-a3e7-eb137fed17e9").
std::string uuid4(std::mt19937_64& rng);

using runara::url_encode;  // escaping of one query value (base/text.hpp)

// Strict decimal integer parse (no sign unless negative, no trailing garbage).
std::optional<std::int64_t> parse_int(std::string_view text);

// OpenSSH public key "type base64 [comment]" -> MD5 fingerprint "aa:bb:...". The error text, when
// the key is rejected, is DigitalOcean's message.
struct KeyCheck {
  std::string fingerprint;  // empty on error
  std::string error;
};
KeyCheck ssh_key_fingerprint(std::string_view public_key);

}  // namespace runara::sim::fakedo
