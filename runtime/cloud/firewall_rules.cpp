// The run's firewall rules; see firewall_rules.hpp.
#include "cloud/firewall_rules.hpp"

#include <arpa/inet.h>

#include <cstdlib>

namespace runara {

namespace {

// A decimal number in [lo, hi] with nothing else in the text.
bool number_in(const std::string& text, long lo, long hi, long& out) {
  if (text.empty() || text.size() > 6) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  out = std::strtol(text.c_str(), nullptr, 10);
  return out >= lo && out <= hi;
}

std::string entry(std::size_t index) { return "entry " + std::to_string(index); }

}  // namespace

Status check_firewall_port(const std::string& port, std::size_t index) {
  const auto dash = port.find('-');
  long low = 0, high = 0;
  const bool ok = dash == std::string::npos
                      ? number_in(port, 1, 65535, low)
                      : number_in(port.substr(0, dash), 1, 65535, low) && number_in(port.substr(dash + 1), 1, 65535, high) &&
                            low <= high;
  if (ok) return {};
  return Error{"option 'ports', " + entry(index) + ": '" + port +
               "' is not a port (1-65535) or a range 'LOW-HIGH' with LOW <= HIGH (e.g. 6379 or \"29500-29510\")"};
}

Status check_firewall_source(const std::string& source, std::size_t index) {
  const auto slash = source.find('/');
  const std::string address = source.substr(0, slash);
  unsigned char buffer[16];
  const bool v4 = inet_pton(AF_INET, address.c_str(), buffer) == 1;
  const bool v6 = !v4 && inet_pton(AF_INET6, address.c_str(), buffer) == 1;
  long prefix = 0;
  const bool prefix_ok = slash == std::string::npos || number_in(source.substr(slash + 1), 0, v4 ? 32 : 128, prefix);
  if ((v4 || v6) && prefix_ok) return {};
  return Error{"option 'sources', " + entry(index) + ": '" + source +
               "' is not an IPv4 or IPv6 address or CIDR block (e.g. \"203.0.113.7\" or \"10.0.0.0/8\")"};
}

Status check_firewall_lists(const std::vector<std::string>& ports, const std::vector<std::string>& sources) {
  if (ports.size() > kMaxFirewallPorts) {
    return Error{"option 'ports' names " + std::to_string(ports.size()) + " ports; at most " +
                 std::to_string(kMaxFirewallPorts) + " (use ranges such as \"29500-29510\")"};
  }
  if (sources.empty()) {
    return Error{"option 'sources' is required: the address(es) runara reaches the machines from, so that SSH "
                 "(tcp 22) stays open to it (e.g. sources = { \"203.0.113.7\" })"};
  }
  if (sources.size() > kMaxFirewallSources) {
    return Error{"option 'sources' names " + std::to_string(sources.size()) + " addresses; at most " +
                 std::to_string(kMaxFirewallSources) + " (use CIDR blocks)"};
  }
  for (std::size_t i = 0; i < ports.size(); ++i) {
    if (Status valid = check_firewall_port(ports[i], i + 1); !valid) return valid;
  }
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (Status valid = check_firewall_source(sources[i], i + 1); !valid) return valid;
  }
  return {};
}

nlohmann::json firewall_body(const std::string& name, const std::string& run_tag, const std::vector<std::string>& ports,
                             const std::vector<std::string>& sources) {
  using json = nlohmann::json;
  const json from_sources = {{"addresses", sources}};
  const json from_run = {{"tags", {run_tag}}, {"addresses", sources}};
  json inbound = json::array({{{"protocol", "tcp"}, {"ports", "22"}, {"sources", from_sources}},
                              {{"protocol", "icmp"}, {"sources", {{"tags", {run_tag}}}}}});
  for (const auto& port : ports) inbound.push_back({{"protocol", "tcp"}, {"ports", port}, {"sources", from_run}});
  const json anywhere = {{"addresses", {"0.0.0.0/0", "::/0"}}};
  const json outbound = json::array({{{"protocol", "tcp"}, {"ports", "0"}, {"destinations", anywhere}},
                                     {{"protocol", "udp"}, {"ports", "0"}, {"destinations", anywhere}},
                                     {{"protocol", "icmp"}, {"destinations", anywhere}}});
  return {{"name", name}, {"inbound_rules", inbound}, {"outbound_rules", outbound}, {"tags", {run_tag}}};
}

}  // namespace runara
