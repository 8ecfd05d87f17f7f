// The run's cloud firewall as DigitalOcean's API takes it (POST/PUT /v2/firewalls), from what a
// script names: ports and the controller's addresses. Checked here, before anything is sent,
// with errors that say which entry is wrong and what was expected.
//
// The rules (docs/api.md, droplet.firewall): inbound tcp 22 from `sources` only (runara logs
// in from there); each named port, tcp, from the run's tag and `sources`; icmp from the run's
// tag; nothing else inbound. Outbound: everything (tcp, udp, icmp to 0.0.0.0/0 and ::/0).
//
// Bounds: a script decides how much C++ holds here, so at most kMaxFirewallPorts ports and
// kMaxFirewallSources sources (a firewall holds a limited number of rules at the API too).
//
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.hpp"

namespace runara {

inline constexpr std::size_t kMaxFirewallPorts = 32;
inline constexpr std::size_t kMaxFirewallSources = 16;

// "6379" or "29500-29510" (1..65535, low <= high); the error names the entry (1-based).
Status check_firewall_port(const std::string& port, std::size_t index);
// An IPv4 or IPv6 address, optionally with a /prefix (0..32, 0..128).
Status check_firewall_source(const std::string& source, std::size_t index);
Status check_firewall_lists(const std::vector<std::string>& ports, const std::vector<std::string>& sources);

// The POST/PUT body: name, inbound_rules, outbound_rules, tags = {run_tag}.
nlohmann::json firewall_body(const std::string& name, const std::string& run_tag, const std::vector<std::string>& ports,
                             const std::vector<std::string>& sources);

}  // namespace runara
