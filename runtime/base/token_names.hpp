// The names the cloud API token can be read from. The token is never visible to scripts under
// any of them: os.getenv refuses them even when granted, and --allow-env / --secret refuse them
// on the command line. Header-only, no state; safe from any thread.
#pragma once

#include <string_view>

namespace runara {

// In the order load_do_token() looks them up.
inline constexpr const char* kCloudTokenEnvNames[] = {"DIGITALOCEAN_TOKEN", "DIGITALOCEAN_ACCESS_TOKEN"};

inline bool is_cloud_token_name(std::string_view name) {
  for (const char* token_name : kCloudTokenEnvNames) {
    if (name == token_name) return true;
  }
  return false;
}

// Why a script cannot have it, for error messages (never suggests another way to get it).
inline constexpr const char* kCloudTokenRefusal =
    "is the cloud API token, which scripts never see: runara uses it only for droplet.* calls";

}  // namespace runara
