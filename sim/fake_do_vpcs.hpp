// The fake DigitalOcean account's VPCs (resources/vpcs in the published spec): each region's
// default VPC, VPCs made by POST /v2/vpcs, their validation (name, region, ip_range: RFC 1918,
// /28../16, no overlap with another VPC of the account, unique name), updates, and the refusals
// to delete a default VPC or one that still has members. Membership itself is the Store's: a
// Droplet is a member of the VPC its `vpc_uuid` names until it is gone.
//
// Not thread-safe: the Store's owner serialises calls. Calls nothing outside itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fake_do_addresses.hpp"
#include "sim/fake_do_catalogue.hpp"
#include "sim/fake_do_reply.hpp"

namespace runara::sim::fakedo {

struct Vpc {
  std::string id;  // UUID
  std::string name;
  std::string description;
  const RegionInfo* region = nullptr;
  Ipv4Range range;
  bool is_default = false;
  std::chrono::system_clock::time_point created;
};

class Vpcs {
 public:
  // `defaults_exist`: every region starts with its default VPC ("default-<slug>"), as in an
  // account that has used the regions. false: a region has none until its first VPC is created
  // (which becomes the default, as the spec says) or a Droplet is created there without vpc_uuid.
  Vpcs(bool defaults_exist, std::chrono::system_clock::time_point now);

  const Vpc* find(const std::string& id) const;
  // The region's default VPC, made when the region has none yet.
  const Vpc& default_for(const RegionInfo& region, std::chrono::system_clock::time_point now);

  Reply create(const nlohmann::json& body, std::chrono::system_clock::time_point now);  // 201 {"vpc"}
  Reply list(const PageRequest& page) const;                                            // 200 {"vpcs"}
  Reply get(const std::string& id) const;                                               // 200 {"vpc"}
  // PUT (`partial` false: name required) and PATCH: name, description, default (true only).
  Reply update(const std::string& id, const nlohmann::json& body, bool partial);
  // 204; 403 for a default VPC; 409 while `members` > 0 (what the API answers, not the spec's 403).
  Reply remove(const std::string& id, int members);

  std::vector<nlohmann::json> all() const;  // every VPC, as the API shows it
  static nlohmann::json json_of(const Vpc& v);
  // The lowest address from network + 2 up (the network address and the gateway's .1 are never
  // given out; nor is the broadcast address) that is not in `taken`.
  static std::optional<std::uint32_t> free_address(const Vpc& v, const std::set<std::uint32_t>& taken);

 private:
  Vpc* find_mutable(const std::string& id);
  const Vpc* named(const std::string& name) const;
  std::optional<Reply> check_name(const nlohmann::json& body, bool required, const Vpc* self) const;
  std::optional<Reply> check_description(const nlohmann::json& body) const;
  Ipv4Range free_range() const;
  Vpc& add_default(const RegionInfo& region, std::chrono::system_clock::time_point created);

  std::vector<Vpc> vpcs_;  // creation order
  std::mt19937_64 rng_;
};

}  // namespace runara::sim::fakedo
