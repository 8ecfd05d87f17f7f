// What the simulated cloud (`runara --sim`) learns of the fake API's Droplets: each new one, so a
// real machine (an sshd on loopback) can stand behind it, and after every change the account's
// private networks and firewalls, so the simulated VPC fabric (sim_fabric.hpp) lets through what
// the cloud firewalls would. Plain data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace runara::sim {

struct SimulatedDroplet {
  std::int64_t id = 0;
  std::string name, size_slug, region_slug, image_slug, public_ipv4;
  std::string vpc_uuid, private_ipv4;    // the VPC it is a member of and its address there
  std::vector<std::string> tags;         // canonical names, as the API shows them
  double price_hourly = 0;
  std::vector<std::string> public_keys;  // "ssh-ed25519 AAAA..." lines of the create's ssh_keys
};

// The account's network now: every Droplet not deleted (public_keys left empty) and every cloud
// firewall as GET /v2/firewalls shows it.
struct SimulatedNetwork {
  std::vector<SimulatedDroplet> droplets;
  std::vector<nlohmann::json> firewalls;
};

}  // namespace runara::sim
