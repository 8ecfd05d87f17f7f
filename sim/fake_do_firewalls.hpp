// The fake DigitalOcean account's cloud firewalls (resources/firewalls in the published spec):
// create, list, get, replace (PUT), delete, and adding/removing Droplets, tags and rules, with the
// validation the API does (name, at least one rule, protocol, ports, addresses, Droplet ids and
// tags that exist) and the `status` / `pending_changes` that say when a change has been applied
// ("waiting" for `apply_s` after each change, then "succeeded").
//
// Not thread-safe: the Store's owner serialises calls. The references' callbacks are called
// synchronously and must not call back into the Firewalls.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fake_do_firewall_rules.hpp"
#include "sim/fake_do_reply.hpp"

namespace runara::sim::fakedo {

class Firewalls {
 public:
  using Steady = std::chrono::steady_clock;
  using Wall = std::chrono::system_clock;

  explicit Firewalls(double apply_s);
  void set_apply_s(double apply_s) { apply_s_ = apply_s; }

  Reply create(const nlohmann::json& body, const FirewallRefs& refs, Wall::time_point now);  // 202
  Reply list(const PageRequest& page) const;
  Reply get(const std::string& id) const;
  Reply replace(const std::string& id, const nlohmann::json& body, const FirewallRefs& refs);  // PUT, 200
  Reply remove(const std::string& id);                                                      // 204
  // POST (add true) / DELETE /v2/firewalls/{id}/droplets, .../tags, .../rules: 204.
  Reply change_droplets(const std::string& id, const nlohmann::json& body, const FirewallRefs& refs, bool add);
  Reply change_tags(const std::string& id, const nlohmann::json& body, const FirewallRefs& refs, bool add);
  Reply change_rules(const std::string& id, const nlohmann::json& body, const FirewallRefs& refs, bool add);

  std::vector<nlohmann::json> all() const;  // every firewall, as the API shows it

 private:
  struct Firewall {
    std::string id;
    std::string name;
    nlohmann::json inbound_rules = nlohmann::json::array();   // normalised, as answered
    nlohmann::json outbound_rules = nlohmann::json::array();
    std::vector<std::int64_t> droplet_ids;
    std::vector<std::string> tags;
    std::vector<std::int64_t> removing;  // Droplets taken off by the change still being applied
    Wall::time_point created;
    Steady::time_point changed;
  };
  // The parts of a create/PUT body, validated.
  struct Spec {
    std::string name;
    nlohmann::json inbound_rules = nlohmann::json::array();
    nlohmann::json outbound_rules = nlohmann::json::array();
    std::vector<std::int64_t> droplet_ids;
    std::vector<std::string> tags;
  };

  Firewall* find(const std::string& id);
  const Firewall* find(const std::string& id) const;
  nlohmann::json json_of(const Firewall& f) const;
  bool applied(const Firewall& f) const;
  void touch(Firewall& f);
  std::optional<Reply> parse_spec(const nlohmann::json& body, const FirewallRefs& refs, const Firewall* self,
                                  Spec& out) const;

  std::vector<Firewall> firewalls_;  // creation order
  double apply_s_;
  std::mt19937_64 rng_;
};

}  // namespace runara::sim::fakedo
