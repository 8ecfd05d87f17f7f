// Where a secret may be sent: `--secret NAME@HOST[:PORT][,HOST[:PORT]...]`.
//
// A secret handle may be sent by a primitive only to the run's own droplets, tunnels and
// simulated servers, and to the destinations bound to it here; the primitive's target policy
// (load/target_policy.hpp) enforces it on every connection. Keeping the binding next to the
// secret's name, not in --allow-host, means granting a host that echoes requests does not hand
// every secret to the script.
//
// Pure parsing; no state, no I/O; safe on any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace runara {

struct SecretOption {
  std::string name;                       // the environment variable holding the value
  std::vector<std::string> destinations;  // "HOST" or "HOST:PORT", as --allow-host takes them
};

// Parses a --secret value: "NAME" or "NAME@HOST[:PORT][,HOST[:PORT]...]". Returns "" on success,
// otherwise a message saying what was wrong and what was expected (starting "--secret VALUE: ").
std::string parse_secret_option(std::string_view text, SecretOption& out);

}  // namespace runara
