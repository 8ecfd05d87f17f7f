// A fake DigitalOcean firewall's rules and references, checked and put in the form the API
// answers them: protocol tcp/udp/icmp, ports "0" | "N" | "N-M" (always "0" for icmp), targets
// (`sources` inbound, `destinations` outbound) of addresses, Droplet ids, tags, load balancer and
// Kubernetes ids. Each refusal is the API's answer (fake_do_reply.hpp). No state.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fake_do_reply.hpp"

namespace runara::sim::fakedo {

// What a firewall may refer to, answered by the Store. Called synchronously; must not call back.
struct FirewallRefs {
  std::function<bool(std::int64_t)> droplet_exists;
  // The tag's canonical name, or nullopt when the account has no such tag.
  std::function<std::optional<std::string>(const std::string&)> tag;
};

// `rules` (null or an array) -> `out`, an array of normalised rules.
std::optional<Reply> normalise_rules(const nlohmann::json& rules, bool inbound, const FirewallRefs& refs,
                                     nlohmann::json& out);
// An array of Droplet ids that all exist (null: none).
std::optional<Reply> check_droplet_ids(const nlohmann::json& ids, const FirewallRefs& refs,
                                       std::vector<std::int64_t>& out);
// An array of names of tags that exist (null: none); `out` holds their canonical names.
std::optional<Reply> check_tags(const nlohmann::json& tags, const FirewallRefs& refs, std::vector<std::string>& out);

}  // namespace runara::sim::fakedo
