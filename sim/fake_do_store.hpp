// The fake DigitalOcean account's state: Droplets with their new -> active -> (deleted) -> gone
// lifecycle, actions, SSH keys, tags, VPCs (fake_do_vpcs.hpp) and firewalls (fake_do_firewalls.hpp). Every operation answers with the HTTP status and JSON body
// the published API gives, so the HTTP layer (fake_digitalocean.cpp) only routes and decorates.
//
// Not thread-safe: the owner serialises calls. Time-based transitions are evaluated lazily from a
// steady clock whenever the store is touched; no background thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fake_do_catalogue.hpp"
#include "sim/fake_do_firewalls.hpp"
#include "sim/fake_do_reply.hpp"
#include "sim/fake_do_vpcs.hpp"
#include "sim/simulated_droplet.hpp"

namespace runara::sim::fakedo {

using SteadyClock = std::chrono::steady_clock;
using WallClock = std::chrono::system_clock;

struct StoreConfig {
  double active_after_s = 0.5;
  double delete_after_s = 0.5;
  int droplet_limit = 25;
  std::string account_uuid;
  bool reject_delete_while_new = false;
  // Public IPv4 for a Droplet id; empty: TEST-NET addresses (203.0.113.0/24, 198.51.100.0/24, ...).
  std::function<std::string(std::int64_t)> public_ipv4;
  std::function<void(const SimulatedDroplet&)> on_created;  // see FakeDoConfig
  std::function<void(std::int64_t)> on_deleted;
  bool default_vpcs = true;       // every region starts with its default VPC (see Vpcs)
  double firewall_apply_s = 0.5;  // a firewall's change is "waiting" this long, then "succeeded"
  bool multi_node_gpus = true;    // false: 8-GPU sizes (gpu-*x8-*) are refused (see FakeDoConfig)
};

struct DropletFilter {
  std::optional<std::string> tag_name;
  std::optional<std::string> name;
  std::optional<std::string> type;
};

class Store {
 public:
  explicit Store(StoreConfig cfg);

  void set_base_url(std::string base_url) { base_url_ = std::move(base_url); }
  void set_config(const StoreConfig& cfg) {
    cfg_ = cfg;
    firewalls_.set_apply_s(cfg.firewall_apply_s);
  }
  const StoreConfig& config() const { return cfg_; }

  // Droplets.
  Reply create_droplets(const nlohmann::json& body);
  Reply list_droplets(const DropletFilter& filter, const PageRequest& page);
  Reply get_droplet(std::int64_t id);
  Reply delete_droplet(std::int64_t id);
  Reply delete_droplets_by_tag(const std::string& tag);
  Reply droplet_actions(std::int64_t id, const PageRequest& page);

  // Actions.
  Reply get_action(std::int64_t id);
  Reply list_actions(const PageRequest& page);

  // Catalogue and account.
  Reply list_sizes(const PageRequest& page);
  Reply account();

  // SSH keys (identifier: numeric id or fingerprint).
  Reply list_keys(const PageRequest& page);
  Reply create_key(const nlohmann::json& body);
  Reply get_key(const std::string& ident);
  Reply update_key(const std::string& ident, const nlohmann::json& body);
  Reply delete_key(const std::string& ident);

  // Tags.
  Reply list_tags(const PageRequest& page);
  Reply create_tag(const nlohmann::json& body);
  Reply get_tag(const std::string& name);
  Reply delete_tag(const std::string& name);

  // VPCs (fake_do_store_networking.cpp). A Droplet is a member of its VPC until it is gone (404),
  // so a VPC cannot be deleted until its Droplets' deletes have finished.
  Reply create_vpc(const nlohmann::json& body);
  Reply list_vpcs(const PageRequest& page);
  Reply get_vpc(const std::string& id);
  Reply update_vpc(const std::string& id, const nlohmann::json& body, bool partial);
  Reply delete_vpc(const std::string& id);
  Reply vpc_members(const std::string& id, const std::optional<std::string>& resource_type, const PageRequest& page);

  // Firewalls (fake_do_store_networking.cpp).
  Reply create_firewall(const nlohmann::json& body);
  Reply list_firewalls(const PageRequest& page);
  Reply get_firewall(const std::string& id);
  Reply update_firewall(const std::string& id, const nlohmann::json& body);
  Reply delete_firewall(const std::string& id);
  // What: "droplets", "tags" or "rules"; add: POST, else DELETE.
  Reply change_firewall(const std::string& id, const std::string& what, const nlohmann::json& body, bool add);

  // Fault injection: the next created Droplet never becomes active and is gone after `after_s`.
  void vanish_next_create(double after_s) { vanish_queue_.push_back(after_s); }

  // Inspection.
  int live_droplets();      // not deleted (and not vanished)
  int existing_droplets();  // still answering GET
  int creates() const { return creates_; }
  std::vector<nlohmann::json> droplets();  // every Droplet still answering GET, GPU ones included
  std::vector<nlohmann::json> keys() const;  // the account's SSH keys
  const std::vector<nlohmann::json>& create_bodies() const { return create_bodies_; }  // each POST /v2/droplets body
  std::vector<nlohmann::json> vpcs() const { return vpcs_.all(); }
  std::vector<nlohmann::json> firewalls() const { return firewalls_.all(); }
  // Every Droplet not deleted (as the simulated cloud sees it) and every firewall.
  SimulatedNetwork network();

 private:
  struct Droplet {
    std::int64_t id = 0;
    std::int64_t seq = 0;
    std::string name;
    const SizeInfo* size = nullptr;
    const RegionInfo* region = nullptr;
    const ImageInfo* image = nullptr;
    std::vector<std::string> tags;
    std::vector<std::string> features;
    bool backups = false;
    bool ipv6 = false;
    bool public_networking = true;
    std::string vpc_uuid;
    SteadyClock::time_point created;
    WallClock::time_point created_wall;
    std::optional<SteadyClock::time_point> vanish_at;
    std::optional<SteadyClock::time_point> deleted;
    std::string public_ip;
    std::string private_ip;
    std::string private_netmask;
    std::string public_ipv6;
  };
  struct Action {
    std::int64_t id = 0;
    std::string type;
    std::int64_t resource_id = 0;
    const RegionInfo* region = nullptr;
    SteadyClock::time_point started;
    std::optional<SteadyClock::time_point> completes;
    std::optional<SteadyClock::time_point> errors;
  };
  struct SshKey {
    std::int64_t id = 0;
    std::string name;
    std::string public_key;
    std::string fingerprint;
  };

  void refresh();
  SteadyClock::duration secs(double s) const;
  WallClock::time_point wall(SteadyClock::time_point t) const;
  bool is_active(const Droplet& d, SteadyClock::time_point at) const;
  std::string status_of(const Droplet& d) const;
  nlohmann::json droplet_json(const Droplet& d) const;
  nlohmann::json action_json(const Action& a) const;
  nlohmann::json key_json(const SshKey& k) const;
  nlohmann::json tag_json(const std::string& name) const;
  std::string canonical_tag(const std::string& name);  // registers new tags
  const std::string* find_tag(const std::string& name) const;
  std::vector<SshKey>::iterator find_key(const std::string& ident);
  std::int64_t add_action(const std::string& type, const Droplet& d);
  std::string public_ipv4_for(const Droplet& d) const;
  SimulatedDroplet simulated(const Droplet& d, const nlohmann::json& create_body);
  FirewallRefs firewall_refs();
  std::set<std::uint32_t> private_addresses_in(const Vpc& vpc) const;

  StoreConfig cfg_;
  std::string base_url_;
  SteadyClock::time_point epoch_steady_;
  WallClock::time_point epoch_wall_;

  std::map<std::int64_t, Droplet> droplets_;  // ordered by id = creation order
  std::map<std::int64_t, Action> actions_;
  std::vector<SshKey> keys_;
  std::vector<nlohmann::json> create_bodies_;
  std::vector<std::string> tags_;  // canonical names, creation order
  std::deque<double> vanish_queue_;

  std::int64_t next_droplet_id_ = 480000001;
  std::int64_t next_action_id_ = 2400000001;
  std::int64_t next_key_id_ = 41000001;
  int creates_ = 0;
  Vpcs vpcs_;  // after epoch_wall_, which it reads
  Firewalls firewalls_;
};

}  // namespace runara::sim::fakedo
