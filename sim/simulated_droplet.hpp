// What the simulated cloud (`runara --sim`) learns of a Droplet the fake API just created, so a
// real machine (an sshd on loopback) can stand behind it. Plain data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace runara::sim {

struct SimulatedDroplet {
  std::int64_t id = 0;
  std::string name, size_slug, region_slug, image_slug, public_ipv4;
  double price_hourly = 0;
  std::vector<std::string> public_keys;  // "ssh-ed25519 AAAA..." lines of the create's ssh_keys
};

}  // namespace runara::sim
