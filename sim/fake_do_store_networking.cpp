// The Store's VPC and firewall operations: what they need of the Droplets (membership, private
// addresses taken, ids that exist) and of the tags, handed to Vpcs and Firewalls.
#include "sim/fake_do_store.hpp"

#include <algorithm>

#include "sim/fake_do_support.hpp"

namespace runara::sim::fakedo {

using nlohmann::json;

std::set<std::uint32_t> Store::private_addresses_in(const Vpc& vpc) const {
  std::set<std::uint32_t> out;
  for (const auto& [id, d] : droplets_)
    if (d.vpc_uuid == vpc.id)
      if (const auto a = parse_ipv4(d.private_ip)) out.insert(*a);
  return out;
}

FirewallRefs Store::firewall_refs() {
  FirewallRefs refs;
  // A Droplet whose delete is pending can no longer be added to anything.
  refs.droplet_exists = [this](std::int64_t id) {
    const auto it = droplets_.find(id);
    return it != droplets_.end() && !it->second.deleted;
  };
  refs.tag = [this](const std::string& name) -> std::optional<std::string> {
    const std::string* t = find_tag(name);
    if (!t) return std::nullopt;
    return *t;
  };
  return refs;
}

SimulatedNetwork Store::network() {
  refresh();
  SimulatedNetwork out;
  for (const auto& [id, d] : droplets_)
    if (!d.deleted && !d.vanish_at) out.droplets.push_back(simulated(d, json::object()));
  out.firewalls = firewalls_.all();
  return out;
}

// ---- VPCs -----------------------------------------------------------------------------------

Reply Store::create_vpc(const json& body) {
  refresh();
  return vpcs_.create(body, WallClock::now());
}

Reply Store::list_vpcs(const PageRequest& page) {
  refresh();
  return vpcs_.list(page);
}

Reply Store::get_vpc(const std::string& id) {
  refresh();
  return vpcs_.get(id);
}

Reply Store::update_vpc(const std::string& id, const json& body, bool partial) {
  refresh();
  return vpcs_.update(id, body, partial);
}

Reply Store::delete_vpc(const std::string& id) {
  refresh();
  int members = 0;
  for (const auto& [did, d] : droplets_) members += d.vpc_uuid == id ? 1 : 0;
  return vpcs_.remove(id, members);
}

Reply Store::vpc_members(const std::string& id, const std::optional<std::string>& resource_type,
                         const PageRequest& page) {
  refresh();
  if (!vpcs_.find(id)) return error_reply(404, "not_found", "The resource you were accessing could not be found.");
  std::vector<json> all;
  // Droplets are the only kind of member the fake has; a filter for another kind lists none.
  if (!resource_type || *resource_type == "droplet") {
    for (const auto& [did, d] : droplets_)
      if (d.vpc_uuid == id)
        all.push_back({{"urn", "do:droplet:" + std::to_string(d.id)}, {"name", d.name}, {"created_at", iso8601(d.created_wall)}});
  }
  return {200, paginate("members", all, page)};
}

// ---- Firewalls ------------------------------------------------------------------------------

Reply Store::create_firewall(const json& body) {
  refresh();
  return firewalls_.create(body, firewall_refs(), WallClock::now());
}

Reply Store::list_firewalls(const PageRequest& page) {
  refresh();
  return firewalls_.list(page);
}

Reply Store::get_firewall(const std::string& id) {
  refresh();
  return firewalls_.get(id);
}

Reply Store::update_firewall(const std::string& id, const json& body) {
  refresh();
  return firewalls_.replace(id, body, firewall_refs());
}

Reply Store::delete_firewall(const std::string& id) {
  refresh();
  return firewalls_.remove(id);
}

Reply Store::change_firewall(const std::string& id, const std::string& what, const json& body, bool add) {
  refresh();
  if (what == "droplets") return firewalls_.change_droplets(id, body, firewall_refs(), add);
  if (what == "tags") return firewalls_.change_tags(id, body, firewall_refs(), add);
  return firewalls_.change_rules(id, body, firewall_refs(), add);
}

}  // namespace runara::sim::fakedo
