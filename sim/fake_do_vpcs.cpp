#include "sim/fake_do_vpcs.hpp"

#include <algorithm>
#include <cstdio>

#include "sim/fake_do_support.hpp"

namespace runara::sim::fakedo {

using nlohmann::json;
using WallTime = std::chrono::system_clock::time_point;

namespace {

Reply unprocessable(const std::string& message) { return error_reply(422, "unprocessable_entity", message); }

Reply not_found() {
  return error_reply(404, "not_found", "The resource you were accessing could not be found.");
}

std::size_t region_index(const RegionInfo& region) {
  return static_cast<std::size_t>(&region - regions().data());
}

// The id the fake has always given a region's default VPC (Droplets created before VPCs were
// served carried it in `vpc_uuid`).
std::string default_id(const RegionInfo& region) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "f0fa7e57-0000-4000-8000-%012llx",
                static_cast<unsigned long long>(region_index(region) + 1));
  return buf;
}

// 10.116.(16 * region).0/20: every default VPC's addresses start "10.116.", as the fake's private
// addresses always have (tests look for that prefix), and no two regions overlap.
Ipv4Range default_range(const RegionInfo& region) {
  return Ipv4Range{0x0a740000u + static_cast<std::uint32_t>(region_index(region) % 16) * 4096u, 20};
}

bool valid_vpc_name(const std::string& name) {
  if (name.empty() || name.size() > 255) return false;
  for (char c : name) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && c != '-' && c != '.') return false;
  }
  return true;
}

}  // namespace

Vpcs::Vpcs(bool defaults_exist, WallTime now) : rng_(std::random_device{}()) {
  if (!defaults_exist) return;
  // Made long before this fake started, as a used account's defaults were.
  const WallTime long_ago = now - std::chrono::hours(24 * 400);
  for (const auto& r : regions()) add_default(r, long_ago);
}

Vpc& Vpcs::add_default(const RegionInfo& region, WallTime created) {
  Vpc v;
  v.id = default_id(region);
  v.name = "default-" + region.slug;
  v.region = &region;
  v.range = default_range(region);
  // A region without a default whose range is taken (by a VPC made with that ip_range) gets a free one.
  for (const auto& o : vpcs_)
    if (o.range.overlaps(v.range)) v.range = free_range();
  v.is_default = true;
  v.created = created;
  vpcs_.push_back(v);
  return vpcs_.back();
}

const Vpc* Vpcs::find(const std::string& id) const {
  for (const auto& v : vpcs_)
    if (v.id == id) return &v;
  return nullptr;
}

Vpc* Vpcs::find_mutable(const std::string& id) { return const_cast<Vpc*>(find(id)); }

const Vpc* Vpcs::named(const std::string& name) const {
  for (const auto& v : vpcs_)
    if (v.name == name) return &v;
  return nullptr;
}

const Vpc& Vpcs::default_for(const RegionInfo& region, WallTime now) {
  for (const auto& v : vpcs_)
    if (v.region == &region && v.is_default) return v;
  return add_default(region, now);
}

json Vpcs::json_of(const Vpc& v) {
  return {{"id", v.id},
          {"urn", "do:vpc:" + v.id},
          {"name", v.name},
          {"description", v.description},
          {"region", v.region->slug},
          {"ip_range", v.range.text()},
          {"default", v.is_default},
          {"created_at", iso8601(v.created)}};
}

std::vector<json> Vpcs::all() const {
  std::vector<json> out;
  for (const auto& v : vpcs_) out.push_back(json_of(v));
  return out;
}

std::optional<std::uint32_t> Vpcs::free_address(const Vpc& v, const std::set<std::uint32_t>& taken) {
  for (std::uint32_t a = v.range.network + 2; a < v.range.last(); ++a)
    if (!taken.count(a)) return a;
  return std::nullopt;
}

// A /20 that overlaps no VPC of the account, as the API generates when no ip_range is given.
Ipv4Range Vpcs::free_range() const {
  for (std::uint32_t n = 0x0a000000u; n < 0x0b000000u; n += 4096u) {
    const Ipv4Range candidate{n, 20};
    bool clash = false;
    for (const auto& v : vpcs_) clash = clash || v.range.overlaps(candidate);
    if (!clash) return candidate;
  }
  return Ipv4Range{0xac100000u, 20};  // 10/8 exhausted: not reachable with the account's VPC counts
}

std::optional<Reply> Vpcs::check_name(const json& body, bool required, const Vpc* self) const {
  if (!body.contains("name") || body["name"].is_null()) {
    if (required) return unprocessable("Name can't be blank");
    return std::nullopt;
  }
  if (!body["name"].is_string()) return error_reply(400, "bad_request", "error parsing request body");
  const std::string name = body["name"].get<std::string>();
  if (name.empty()) return unprocessable("Name can't be blank");
  if (!valid_vpc_name(name))
    return unprocessable("Name may only contain alphanumeric characters, dashes, and periods.");
  const Vpc* same = named(name);
  if (same && same != self) return unprocessable("A VPC network with the name " + name + " already exists.");
  return std::nullopt;
}

std::optional<Reply> Vpcs::check_description(const json& body) const {
  if (!body.contains("description") || body["description"].is_null()) return std::nullopt;
  if (!body["description"].is_string()) return error_reply(400, "bad_request", "error parsing request body");
  if (body["description"].get<std::string>().size() > 255)
    return unprocessable("Description may be a maximum of 255 characters.");
  return std::nullopt;
}

Reply Vpcs::create(const json& body, WallTime now) {
  if (!body.is_object()) return error_reply(400, "bad_request", "error parsing request body");
  if (auto bad = check_name(body, true, nullptr)) return *bad;
  if (auto bad = check_description(body)) return *bad;
  if (!body.contains("region") || !body["region"].is_string())
    return unprocessable("Region can't be blank");
  const RegionInfo* region = find_region(body["region"].get<std::string>());
  if (!region) return unprocessable("You specified an invalid region for VPC creation.");

  Ipv4Range range = free_range();
  if (body.contains("ip_range") && !body["ip_range"].is_null()) {
    if (!body["ip_range"].is_string()) return error_reply(400, "bad_request", "error parsing request body");
    const auto parsed = parse_ipv4_cidr(body["ip_range"].get<std::string>());
    if (!parsed || !parsed->aligned)
      return unprocessable("ip_range must be a valid network in CIDR notation, e.g. 10.10.10.0/24.");
    if (!is_private_range(parsed->range))
      return unprocessable("ip_range must be in range of private addresses as defined in RFC1918.");
    if (parsed->range.prefix < 16 || parsed->range.prefix > 28)
      return unprocessable("ip_range may not be smaller than /28 nor larger than /16.");
    for (const auto& v : vpcs_)
      if (v.range.overlaps(parsed->range))  // DigitalOcean's words, as terraform users have quoted them
        return unprocessable("This range/size overlaps with another VPC network in your account: " + v.name +
                             " " + v.range.text() + ".");
    range = parsed->range;
  }

  Vpc v;
  v.id = uuid4(rng_);
  v.name = body["name"].get<std::string>();
  if (body.contains("description") && body["description"].is_string())
    v.description = body["description"].get<std::string>();
  v.region = region;
  v.range = range;
  // The spec: the first VPC made in a region without one becomes the region's default.
  v.is_default = std::none_of(vpcs_.begin(), vpcs_.end(), [&](const Vpc& o) { return o.region == region; });
  v.created = now;
  vpcs_.push_back(v);
  return {201, json{{"vpc", json_of(v)}}};
}

Reply Vpcs::list(const PageRequest& page) const { return {200, paginate("vpcs", all(), page)}; }

Reply Vpcs::get(const std::string& id) const {
  const Vpc* v = find(id);
  if (!v) return not_found();
  return {200, json{{"vpc", json_of(*v)}}};
}

Reply Vpcs::update(const std::string& id, const json& body, bool partial) {
  Vpc* v = find_mutable(id);
  if (!v) return not_found();
  if (!body.is_object()) return error_reply(400, "bad_request", "error parsing request body");
  if (auto bad = check_name(body, !partial, v)) return *bad;
  if (auto bad = check_description(body)) return *bad;
  if (body.contains("default") && !body["default"].is_null() && !body["default"].is_boolean())
    return error_reply(400, "bad_request", "error parsing request body");
  const bool make_default = body.contains("default") && body["default"].is_boolean() && body["default"].get<bool>();
  const bool unset_default = body.contains("default") && body["default"].is_boolean() && !body["default"].get<bool>();
  if (unset_default && v->is_default) return error_reply(403, "forbidden", "Can not unset default VPCs");

  if (body.contains("name") && body["name"].is_string()) v->name = body["name"].get<std::string>();
  if (body.contains("description") && body["description"].is_string())
    v->description = body["description"].get<std::string>();
  if (make_default && !v->is_default) {
    for (auto& o : vpcs_)
      if (o.region == v->region) o.is_default = false;
    v->is_default = true;
  }
  return {200, json{{"vpc", json_of(*v)}}};
}

Reply Vpcs::remove(const std::string& id, int members) {
  const Vpc* v = find(id);
  if (!v) return not_found();
  if (v->is_default) return error_reply(403, "forbidden", "Can not delete default VPCs");
  if (members > 0) return error_reply(409, "conflict", "Can not delete VPC with members");
  vpcs_.erase(vpcs_.begin() + (v - vpcs_.data()));
  return {204, nullptr};
}

}  // namespace runara::sim::fakedo
