#include "sim/fake_do_firewall_rules.hpp"

#include <algorithm>

#include "sim/fake_do_addresses.hpp"
#include "sim/fake_do_support.hpp"

namespace runara::sim::fakedo {

using nlohmann::json;

namespace {

Reply unprocessable(const std::string& message) { return error_reply(422, "unprocessable_entity", message); }
Reply unparsable() { return error_reply(400, "bad_request", "error parsing request body"); }

// "0" (every port), "N" or "N-M" with 1 <= N <= M <= 65535.
bool valid_ports(const std::string& p) {
  if (p == "0") return true;
  auto port = [](const std::string& s) {
    const auto n = s.size() <= 5 && !s.empty() && s[0] != '0' ? parse_int(s) : std::nullopt;
    return n && *n >= 1 && *n <= 65535 ? n : std::nullopt;
  };
  const auto dash = p.find('-');
  if (dash == std::string::npos) return port(p).has_value();
  const auto lo = port(p.substr(0, dash));
  const auto hi = port(p.substr(dash + 1));
  return lo && hi && *lo <= *hi;
}

std::optional<Reply> string_array(const json& v, std::vector<std::string>& out) {
  if (v.is_null()) return std::nullopt;
  if (!v.is_array()) return unparsable();
  for (const auto& s : v) {
    if (!s.is_string()) return unparsable();
    out.push_back(s.get<std::string>());
  }
  return std::nullopt;
}

// sources / destinations: only the kinds given are answered, as in the spec's examples.
std::optional<Reply> normalise_target(const json& target, const char* what, const FirewallRefs& refs, json& out) {
  if (!target.is_object())  // DigitalOcean's words (an array instead of an object draws them)
    return unprocessable(std::string("You specified an invalid type for one of the ") + what + ".");
  out = json::object();
  for (const auto& [key, value] : target.items()) {
    if (value.is_null()) continue;
    if (key == "addresses") {
      std::vector<std::string> list;
      if (auto bad = string_array(value, list)) return bad;
      for (const auto& a : list)
        if (!valid_rule_address(a)) return unprocessable("invalid address");  // the API's words
      out[key] = list;
    } else if (key == "droplet_ids") {
      std::vector<std::int64_t> ids;
      if (auto bad = check_droplet_ids(value, refs, ids)) return bad;
      out[key] = ids;
    } else if (key == "tags") {
      std::vector<std::string> tags;
      if (auto bad = check_tags(value, refs, tags)) return bad;
      out[key] = tags;
    } else if (key == "load_balancer_uids" || key == "kubernetes_ids") {
      std::vector<std::string> list;
      if (auto bad = string_array(value, list)) return bad;
      out[key] = list;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Reply> check_droplet_ids(const json& ids, const FirewallRefs& refs, std::vector<std::int64_t>& out) {
  if (ids.is_null()) return std::nullopt;
  if (!ids.is_array()) return unparsable();
  for (const auto& id : ids) {
    if (!id.is_number_integer()) return unparsable();
    const auto n = id.get<std::int64_t>();
    if (!refs.droplet_exists(n)) return unprocessable("Droplet with ID " + std::to_string(n) + " could not be found.");
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  return std::nullopt;
}

std::optional<Reply> check_tags(const json& tags, const FirewallRefs& refs, std::vector<std::string>& out) {
  std::vector<std::string> names;
  if (auto bad = string_array(tags, names)) return bad;
  for (const auto& n : names) {
    const auto canonical = refs.tag(n);
    // existing_tags_array.yml: "Tag names must exist in order to be referenced in a request."
    if (!canonical) return unprocessable("Tag " + n + " does not exist. Tags must exist to be used in a firewall.");
    if (std::find(out.begin(), out.end(), *canonical) == out.end()) out.push_back(*canonical);
  }
  return std::nullopt;
}

std::optional<Reply> normalise_rules(const json& rules, bool inbound, const FirewallRefs& refs, json& out) {
  out = json::array();
  if (rules.is_null()) return std::nullopt;
  if (!rules.is_array()) return unparsable();
  const char* target_key = inbound ? "sources" : "destinations";
  for (const auto& rule : rules) {
    if (!rule.is_object()) return unparsable();
    const std::string protocol = rule.contains("protocol") && rule["protocol"].is_string()
                                     ? rule["protocol"].get<std::string>()
                                     : std::string();
    if (protocol != "tcp" && protocol != "udp" && protocol != "icmp")
      return unprocessable("You specified an invalid protocol. Protocol must be one of tcp, udp or icmp.");
    std::string ports = "0";
    if (protocol != "icmp") {  // icmp has no ports; the API answers "0" whatever was sent
      ports = rule.contains("ports") && rule["ports"].is_string() ? rule["ports"].get<std::string>() : "";
      if (!valid_ports(ports)) return unprocessable("you must specify a valid range for ports");  // the API's words
    }
    json target;
    if (auto bad = normalise_target(rule.contains(target_key) ? rule[target_key] : json(), target_key, refs, target))
      return bad;
    out.push_back({{"protocol", protocol}, {"ports", ports}, {target_key, target}});
  }
  return std::nullopt;
}

}  // namespace runara::sim::fakedo
