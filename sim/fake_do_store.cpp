#include "sim/fake_do_store.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "sim/fake_do_support.hpp"

namespace runara::sim::fakedo {

using nlohmann::json;

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Reply not_found() {
  return error_reply(404, "not_found", "The resource you were accessing could not be found.");
}

Reply unprocessable(const std::string& message) {
  return error_reply(422, "unprocessable_entity", message);
}

// The tags endpoints answer 400 in the error_with_root_causes shape (resources/tags/responses).
Reply tag_bad_request(const std::string& name) {
  const std::string msg =
      "Error validating resource tag: \"tag-name \\\"" + name + "\\\" contains invalid characters\"";
  return {400, json{{"error", msg},
                    {"messages", nullptr},
                    {"root_causes", json::array({"rpc error: code = InvalidArgument desc = " + msg})}}};
}

const char* kPendingEvent = "Droplet already has a pending event.";

}  // namespace

Store::Store(StoreConfig cfg)
    : cfg_(std::move(cfg)),
      epoch_steady_(SteadyClock::now()),
      epoch_wall_(WallClock::now()),
      vpcs_(cfg_.default_vpcs, epoch_wall_),
      firewalls_(cfg_.firewall_apply_s) {}

SteadyClock::duration Store::secs(double s) const {
  return std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(std::max(0.0, s)));
}

WallClock::time_point Store::wall(SteadyClock::time_point t) const {
  return epoch_wall_ + std::chrono::duration_cast<WallClock::duration>(t - epoch_steady_);
}

void Store::refresh() {
  const auto now = SteadyClock::now();
  for (auto it = droplets_.begin(); it != droplets_.end();) {
    const Droplet& d = it->second;
    const bool vanished = d.vanish_at && now >= *d.vanish_at;
    const bool destroyed = d.deleted && now >= *d.deleted + secs(cfg_.delete_after_s);
    if (vanished && !d.deleted && cfg_.on_deleted) cfg_.on_deleted(d.id);
    it = (vanished || destroyed) ? droplets_.erase(it) : std::next(it);
  }
}

bool Store::is_active(const Droplet& d, SteadyClock::time_point at) const {
  if (d.vanish_at) return false;  // placement failed: it never comes up
  return at >= d.created + secs(cfg_.active_after_s);
}

std::string Store::status_of(const Droplet& d) const {
  if (d.deleted) return "off";
  return is_active(d, SteadyClock::now()) ? "active" : "new";
}

std::string Store::public_ipv4_for(const Droplet& d) const {
  if (cfg_.public_ipv4) return cfg_.public_ipv4(d.id);
  static const char* blocks[] = {"203.0.113.", "198.51.100.", "192.0.2."};
  const std::int64_t n = (d.seq - 1) % (3 * 253);
  return std::string(blocks[n / 253]) + std::to_string(n % 253 + 2);
}

json Store::droplet_json(const Droplet& d) const {
  const auto now = SteadyClock::now();
  const bool up = is_active(d, d.deleted ? *d.deleted : now);
  json v4 = json::array();
  json v6 = json::array();
  if (up) {
    v4.push_back({{"ip_address", d.private_ip},
                  {"netmask", d.private_netmask},
                  {"gateway", "nil"},
                  {"type", "private"}});
    if (d.public_networking) {
      const std::string pub = d.public_ip;
      const std::string gw = pub.substr(0, pub.rfind('.') + 1) + "1";
      v4.push_back({{"ip_address", pub}, {"netmask", "255.255.255.0"}, {"gateway", gw}, {"type", "public"}});
      if (d.ipv6)
        v6.push_back({{"ip_address", d.public_ipv6},
                      {"netmask", 64},
                      {"gateway", "2001:db8:0:1010::1"},
                      {"type", "public"}});
    }
  }
  json j = json::object();
  j["id"] = d.id;
  j["name"] = d.name;
  j["memory"] = d.size->memory_mb;
  j["vcpus"] = d.size->vcpus;
  j["disk"] = d.size->disk_gb;
  j["disk_info"] = disk_info_json(d.size->disks);
  j["locked"] = d.deleted.has_value();
  j["status"] = status_of(d);
  j["kernel"] = nullptr;
  j["created_at"] = iso8601(d.created_wall);
  j["features"] = d.features;
  j["backup_ids"] = json::array();
  if (d.backups) {
    const auto day = d.created_wall + std::chrono::hours(24);
    j["next_backup_window"] = {{"start", iso8601(day)},
                               {"end", iso8601(day + std::chrono::hours(23))}};
  } else {
    j["next_backup_window"] = nullptr;
  }
  j["snapshot_ids"] = json::array();
  j["image"] = image_json(*d.image);
  j["volume_ids"] = json::array();
  j["size"] = size_json(*d.size);
  j["size_slug"] = d.size->slug;
  j["networks"] = {{"v4", v4}, {"v6", v6}};
  j["region"] = region_json(*d.region);
  j["tags"] = d.tags;
  j["vpc_uuid"] = d.vpc_uuid;
  if (d.size->gpu.count > 0) j["gpu_info"] = gpu_info_json(d.size->gpu);
  return j;
}

json Store::action_json(const Action& a) const {
  const auto now = SteadyClock::now();
  std::string status = "in-progress";
  json completed_at = nullptr;
  if (a.errors && now >= *a.errors) {
    status = "errored";
    completed_at = iso8601(wall(*a.errors));
  } else if (a.completes && now >= *a.completes) {
    status = "completed";
    completed_at = iso8601(wall(*a.completes));
  }
  return {{"id", a.id},
          {"status", status},
          {"type", a.type},
          {"started_at", iso8601(wall(a.started))},
          {"completed_at", completed_at},
          {"resource_id", a.resource_id},
          {"resource_type", "droplet"},
          {"region", region_json(*a.region)},
          {"region_slug", a.region->slug}};
}

std::int64_t Store::add_action(const std::string& type, const Droplet& d) {
  Action a;
  a.id = next_action_id_++;
  a.type = type;
  a.resource_id = d.id;
  a.region = d.region;
  a.started = SteadyClock::now();
  if (type == "create") {
    if (d.vanish_at)
      a.errors = d.vanish_at;
    else
      a.completes = d.created + secs(cfg_.active_after_s);
  } else {
    a.completes = a.started + secs(cfg_.delete_after_s);
  }
  actions_[a.id] = a;
  return a.id;
}

const std::string* Store::find_tag(const std::string& name) const {
  const std::string l = lower(name);
  for (const auto& t : tags_)
    if (lower(t) == l) return &t;
  return nullptr;
}

std::string Store::canonical_tag(const std::string& name) {
  if (const std::string* t = find_tag(name)) return *t;
  tags_.push_back(name);
  return name;
}

// ---- Droplets -------------------------------------------------------------------------------

Reply Store::create_droplets(const json& body) {
  refresh();
  create_bodies_.push_back(body);
  if (!body.is_object()) return error_reply(400, "bad_request", "error parsing request body");

  std::vector<std::string> names;
  bool multi = false;
  if (body.contains("names") && !body["names"].is_null()) {
    multi = true;
    if (!body["names"].is_array() || body["names"].empty())
      return unprocessable("names must be a non-empty array of strings");
    for (const auto& n : body["names"]) {
      if (!n.is_string()) return unprocessable("names must be a non-empty array of strings");
      names.push_back(n.get<std::string>());
    }
    if (names.size() > 10) return unprocessable("You may only create up to 10 Droplets at a time.");
  } else if (body.contains("name") && body["name"].is_string()) {
    names.push_back(body["name"].get<std::string>());
  } else {
    return unprocessable("Name is required.");
  }
  for (const auto& n : names)
    if (!valid_droplet_name(n))
      return unprocessable("Only valid hostname characters are allowed. (a-z, A-Z, 0-9, . and -)");

  const SizeInfo* size = nullptr;
  if (body.contains("size") && body["size"].is_string()) size = find_size(body["size"].get<std::string>());
  if (!size) return unprocessable("You specified an invalid size for Droplet creation.");
  if (!cfg_.multi_node_gpus && size->slug.rfind("gpu-", 0) == 0 && size->slug.find("x8-") != std::string::npos)
    return unprocessable("This size is currently restricted please send an additional payment to unlock.");

  const ImageInfo* image = body.contains("image") ? find_image(body["image"]) : nullptr;
  if (!image) return unprocessable("You specified an invalid image for Droplet creation.");

  // vpc_uuid: a VPC of the account (an unknown one answers 404, as observed of the real API).
  const Vpc* chosen_vpc = nullptr;
  if (body.contains("vpc_uuid") && !body["vpc_uuid"].is_null()) {
    if (!body["vpc_uuid"].is_string()) return error_reply(400, "bad_request", "error parsing request body");
    chosen_vpc = vpcs_.find(body["vpc_uuid"].get<std::string>());
    if (!chosen_vpc) return not_found();
  }

  const RegionInfo* region = nullptr;
  if (body.contains("region") && !body["region"].is_null()) {
    if (!body["region"].is_string())
      return unprocessable("You specified an invalid region for Droplet creation.");
    const std::string slug = body["region"].get<std::string>();
    region = find_region(slug);
    if (!region && !slug.empty()) {
      // A slug prefix ("nyc") picks any datacenter of that region offering the size.
      for (const auto& r : regions())
        if (r.slug.rfind(slug, 0) == 0 && size->in_region(r.slug)) {
          region = &r;
          break;
        }
    }
    if (!region) return unprocessable("You specified an invalid region for Droplet creation.");
  } else if (chosen_vpc) {
    region = chosen_vpc->region;  // no region: the VPC's
  } else {
    for (const auto& r : size->regions)
      if ((region = find_region(r))) break;
  }
  if (!region || !size->available || !size->in_region(region->slug))
    return unprocessable("Size is not available in this region.");
  if (chosen_vpc && chosen_vpc->region != region)
    return unprocessable("The VPC " + chosen_vpc->id + " is in " + chosen_vpc->region->slug +
                         ", not in the Droplet's region " + region->slug + ".");

  std::vector<std::string> tags;
  if (body.contains("tags") && !body["tags"].is_null()) {
    if (!body["tags"].is_array()) return unprocessable("tags must be an array of strings");
    for (const auto& t : body["tags"]) {
      if (!t.is_string()) return unprocessable("tags must be an array of strings");
      const std::string name = t.get<std::string>();
      if (!valid_tag_name(name))
        return unprocessable("Error validating resource tag: tag-name \"" + name +
                             "\" contains invalid characters");
      tags.push_back(name);
    }
  }

  if (body.contains("ssh_keys") && !body["ssh_keys"].is_null()) {
    if (!body["ssh_keys"].is_array()) return error_reply(400, "bad_request", "error parsing request body");
    std::string invalid;
    for (const auto& k : body["ssh_keys"]) {
      const std::string ident = k.is_string() ? k.get<std::string>() : k.dump();
      if (find_key(ident) == keys_.end()) invalid += (invalid.empty() ? "" : ", ") + ident;
    }
    if (!invalid.empty()) return unprocessable(invalid + " are invalid key identifiers for Droplet creation.");
  }

  if (body.contains("user_data") && body["user_data"].is_string() &&
      body["user_data"].get<std::string>().size() > 64 * 1024)
    return unprocessable("user_data exceeds the maximum size of 64 KiB.");

  auto flag = [&body](const char* key, bool dflt) {
    return body.contains(key) && body[key].is_boolean() ? body[key].get<bool>() : dflt;
  };
  const bool ipv6 = flag("ipv6", false);
  const bool public_networking = flag("public_networking", true);
  if (!public_networking && ipv6)
    return unprocessable("ipv6 must be false when public_networking is false.");

  if (live_droplets() + static_cast<int>(names.size()) > cfg_.droplet_limit)
    return unprocessable("creating this/these droplet(s) will exceed your droplet limit");

  // The region's default VPC when none is named; each Droplet gets the lowest free private
  // address of its VPC's ip_range (all of them allocated before anything is created).
  const Vpc& vpc = chosen_vpc ? *chosen_vpc : vpcs_.default_for(*region, wall(SteadyClock::now()));
  std::set<std::uint32_t> taken = private_addresses_in(vpc);
  std::vector<std::uint32_t> addresses;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto a = Vpcs::free_address(vpc, taken);
    if (!a) return unprocessable("The VPC " + vpc.name + " (" + vpc.range.text() + ") has no free IP address left.");
    taken.insert(*a);
    addresses.push_back(*a);
  }

  // Accepted: create them all.
  std::vector<std::string> canonical;
  for (const auto& t : tags) {
    const std::string c = canonical_tag(t);
    if (std::find(canonical.begin(), canonical.end(), c) == canonical.end()) canonical.push_back(c);
  }
  std::vector<std::string> features;
  if (flag("backups", false)) features.push_back("backups");
  if (flag("with_droplet_agent", true)) features.push_back("droplet_agent");
  if (flag("monitoring", false)) features.push_back("monitoring");
  if (ipv6) features.push_back("ipv6");
  features.push_back("private_networking");

  const auto now = SteadyClock::now();
  json out_droplets = json::array();
  json out_actions = json::array();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    Droplet d;
    d.id = next_droplet_id_++;
    d.seq = ++creates_;
    d.name = name;
    d.size = size;
    d.region = region;
    d.image = image;
    d.tags = canonical;
    d.features = features;
    d.backups = flag("backups", false);
    d.ipv6 = ipv6;
    d.public_networking = public_networking;
    d.vpc_uuid = vpc.id;
    d.created = now;
    d.created_wall = wall(now);
    if (!vanish_queue_.empty()) {
      d.vanish_at = now + secs(vanish_queue_.front());
      vanish_queue_.pop_front();
    }
    d.public_ip = public_ipv4_for(d);
    d.private_ip = ipv4_text(addresses[i]);
    d.private_netmask = vpc.range.netmask();
    char v6[64];
    std::snprintf(v6, sizeof v6, "2001:db8:0:1010::%llx:1", static_cast<unsigned long long>(d.seq + 0x100));
    d.public_ipv6 = v6;
    const std::int64_t action = add_action("create", d);
    out_actions.push_back({{"id", action}, {"rel", "create"}, {"href", base_url_ + "/v2/actions/" + std::to_string(action)}});
    out_droplets.push_back(droplet_json(d));
    if (cfg_.on_created) cfg_.on_created(simulated(d, body));
    droplets_[d.id] = std::move(d);
  }
  json body_out = json::object();
  if (multi)
    body_out["droplets"] = out_droplets;
  else
    body_out["droplet"] = out_droplets[0];
  body_out["links"] = {{"actions", out_actions}};
  return {202, body_out};
}

Reply Store::list_droplets(const DropletFilter& filter, const PageRequest& page) {
  refresh();
  if (filter.tag_name && (filter.type || filter.name))
    return unprocessable("tag_name can not be combined with name or type");
  bool gpus = false;
  if (filter.type) {
    if (*filter.type == "gpus")
      gpus = true;
    else if (*filter.type != "droplets")
      return unprocessable("type must be one of: droplets, gpus");
  }
  std::string tag;
  if (filter.tag_name) {
    const std::string* t = find_tag(*filter.tag_name);
    tag = t ? *t : *filter.tag_name;
  }
  std::vector<json> all;
  for (const auto& [id, d] : droplets_) {
    // Only non-GPU Droplets unless type=gpus (a tag filter does not widen that).
    if (d.size->is_gpu() != gpus) continue;
    if (filter.tag_name && std::find(d.tags.begin(), d.tags.end(), tag) == d.tags.end()) continue;
    if (filter.name && lower(d.name) != lower(*filter.name)) continue;
    all.push_back(droplet_json(d));
  }
  return {200, paginate("droplets", all, page)};
}

SimulatedDroplet Store::simulated(const Droplet& d, const json& body) {
  SimulatedDroplet out;
  out.id = d.id;
  out.name = d.name;
  out.size_slug = d.size->slug;
  out.region_slug = d.region->slug;
  out.image_slug = d.image ? d.image->slug : "";
  out.public_ipv4 = d.public_ip;
  out.vpc_uuid = d.vpc_uuid;
  out.private_ipv4 = d.private_ip;
  out.tags = d.tags;
  out.price_hourly = d.size->price_hourly;
  if (body.contains("ssh_keys") && body["ssh_keys"].is_array()) {
    for (const auto& k : body["ssh_keys"]) {
      const auto key = find_key(k.is_string() ? k.get<std::string>() : k.dump());
      if (key != keys_.end()) out.public_keys.push_back(key->public_key);
    }
  }
  return out;
}

Reply Store::get_droplet(std::int64_t id) {
  refresh();
  const auto it = droplets_.find(id);
  if (it == droplets_.end()) return not_found();
  return {200, json{{"droplet", droplet_json(it->second)}}};
}

Reply Store::delete_droplet(std::int64_t id) {
  refresh();
  const auto it = droplets_.find(id);
  if (it == droplets_.end()) return not_found();
  Droplet& d = it->second;
  if (d.deleted) return unprocessable(kPendingEvent);
  if (cfg_.reject_delete_while_new && status_of(d) == "new") return unprocessable(kPendingEvent);
  d.deleted = SteadyClock::now();
  add_action("destroy", d);
  if (cfg_.on_deleted) cfg_.on_deleted(d.id);
  return {204, nullptr};
}

Reply Store::delete_droplets_by_tag(const std::string& tag) {
  refresh();
  const std::string* t = find_tag(tag);
  if (!t) return not_found();
  const std::string canonical = *t;
  for (auto& [id, d] : droplets_) {
    // GPU Droplets are left alone: deleting them by tag is unspecified upstream.
    if (d.deleted || d.size->is_gpu()) continue;
    if (std::find(d.tags.begin(), d.tags.end(), canonical) == d.tags.end()) continue;
    if (cfg_.reject_delete_while_new && status_of(d) == "new") continue;
    d.deleted = SteadyClock::now();
    add_action("destroy", d);
    if (cfg_.on_deleted) cfg_.on_deleted(d.id);
  }
  return {204, nullptr};
}

Reply Store::droplet_actions(std::int64_t id, const PageRequest& page) {
  refresh();
  if (!droplets_.count(id)) return not_found();
  std::vector<json> all;
  for (const auto& [aid, a] : actions_)
    if (a.resource_id == id) all.push_back(action_json(a));
  return {200, paginate("actions", all, page)};
}

// ---- Actions --------------------------------------------------------------------------------

Reply Store::get_action(std::int64_t id) {
  refresh();
  const auto it = actions_.find(id);
  if (it == actions_.end()) return not_found();
  return {200, json{{"action", action_json(it->second)}}};
}

Reply Store::list_actions(const PageRequest& page) {
  refresh();
  std::vector<json> all;
  // Newest first, as the account's action history is listed.
  for (auto it = actions_.rbegin(); it != actions_.rend(); ++it) all.push_back(action_json(it->second));
  return {200, paginate("actions", all, page)};
}

// ---- Catalogue and account ------------------------------------------------------------------

Reply Store::list_sizes(const PageRequest& page) {
  std::vector<json> all;
  for (const auto& s : sizes()) all.push_back(size_json(s));
  return {200, paginate("sizes", all, page)};
}

Reply Store::account() {
  return {200, json{{"account",
                     {{"droplet_limit", cfg_.droplet_limit},
                      {"floating_ip_limit", 3},
                      {"email", "runara-fake@example.com"},
                      {"name", "Runara Fake"},
                      {"uuid", cfg_.account_uuid},
                      {"email_verified", true},
                      {"status", "active"},
                      {"status_message", ""},
                      {"team", {{"uuid", "5df3e3004a17e242b7c20ca6c9fc25b701a47ece"}, {"name", "Runara Fake Team"}}}}}}};
}

// ---- SSH keys -------------------------------------------------------------------------------

json Store::key_json(const SshKey& k) const {
  return {{"id", k.id}, {"fingerprint", k.fingerprint}, {"public_key", k.public_key}, {"name", k.name}};
}

std::vector<Store::SshKey>::iterator Store::find_key(const std::string& ident) {
  const auto id = parse_int(ident);
  return std::find_if(keys_.begin(), keys_.end(), [&](const SshKey& k) {
    return id ? k.id == *id : k.fingerprint == ident;
  });
}

Reply Store::list_keys(const PageRequest& page) {
  std::vector<json> all;
  for (const auto& k : keys_) all.push_back(key_json(k));
  return {200, paginate("ssh_keys", all, page)};
}

Reply Store::create_key(const json& body) {
  if (!body.is_object()) return error_reply(400, "bad_request", "error parsing request body");
  if (!body.contains("name") || !body["name"].is_string() || body["name"].get<std::string>().empty())
    return unprocessable("Name can't be blank");
  if (!body.contains("public_key") || !body["public_key"].is_string())
    return unprocessable("Key invalid, key should be of the format `type key [comment]`");
  const std::string public_key = body["public_key"].get<std::string>();
  const KeyCheck check = ssh_key_fingerprint(public_key);
  if (check.fingerprint.empty()) return unprocessable(check.error);
  for (const auto& k : keys_)
    if (k.fingerprint == check.fingerprint) return unprocessable("SSH Key is already in use on your account");
  SshKey k;
  k.id = next_key_id_++;
  k.name = body["name"].get<std::string>();
  k.public_key = public_key;
  k.fingerprint = check.fingerprint;
  keys_.push_back(k);
  return {201, json{{"ssh_key", key_json(k)}}};
}

Reply Store::get_key(const std::string& ident) {
  const auto it = find_key(ident);
  if (it == keys_.end()) return not_found();
  return {200, json{{"ssh_key", key_json(*it)}}};
}

Reply Store::update_key(const std::string& ident, const json& body) {
  const auto it = find_key(ident);
  if (it == keys_.end()) return not_found();
  if (!body.is_object()) return error_reply(400, "bad_request", "error parsing request body");
  if (body.contains("name") && body["name"].is_string()) it->name = body["name"].get<std::string>();
  return {200, json{{"ssh_key", key_json(*it)}}};
}

Reply Store::delete_key(const std::string& ident) {
  const auto it = find_key(ident);
  if (it == keys_.end()) return not_found();
  keys_.erase(it);
  return {204, nullptr};
}

// ---- Tags -----------------------------------------------------------------------------------

json Store::tag_json(const std::string& name) const {
  int count = 0;
  std::int64_t last = 0;
  for (const auto& [id, d] : droplets_)
    if (std::find(d.tags.begin(), d.tags.end(), name) != d.tags.end()) {
      ++count;
      last = id;
    }
  json droplets = {{"count", count}};
  json resources = {{"count", count}};
  if (count) {
    const std::string uri = base_url_ + "/v2/droplets/" + std::to_string(last);
    droplets["last_tagged_uri"] = uri;
    resources["last_tagged_uri"] = uri;
  }
  resources["droplets"] = droplets;
  for (const char* kind : {"images", "volumes", "volume_snapshots", "databases"})
    resources[kind] = {{"count", 0}};
  return {{"name", name}, {"resources", resources}};
}

Reply Store::list_tags(const PageRequest& page) {
  refresh();
  std::vector<json> all;
  for (const auto& t : tags_) all.push_back(tag_json(t));
  return {200, paginate("tags", all, page)};
}

Reply Store::create_tag(const json& body) {
  refresh();
  if (!body.is_object() || !body.contains("name") || !body["name"].is_string())
    return error_reply(400, "bad_request", "error parsing request body");
  const std::string name = body["name"].get<std::string>();
  if (!valid_tag_name(name)) return tag_bad_request(name);
  return {201, json{{"tag", tag_json(canonical_tag(name))}}};
}

Reply Store::get_tag(const std::string& name) {
  refresh();
  const std::string* t = find_tag(name);
  if (!t || *t != name) return not_found();  // the API wants the canonical capitalisation
  return {200, json{{"tag", tag_json(*t)}}};
}

Reply Store::delete_tag(const std::string& name) {
  refresh();
  const std::string* t = find_tag(name);
  if (!t || *t != name) return not_found();
  const std::string canonical = *t;
  for (auto& [id, d] : droplets_) d.tags.erase(std::remove(d.tags.begin(), d.tags.end(), canonical), d.tags.end());
  tags_.erase(std::remove(tags_.begin(), tags_.end(), canonical), tags_.end());
  return {204, nullptr};
}

// ---- Inspection -----------------------------------------------------------------------------

int Store::live_droplets() {
  refresh();
  int n = 0;
  for (const auto& [id, d] : droplets_) n += d.deleted ? 0 : 1;
  return n;
}

int Store::existing_droplets() {
  refresh();
  return static_cast<int>(droplets_.size());
}

std::vector<json> Store::keys() const {
  std::vector<json> out;
  for (const auto& k : keys_) out.push_back(key_json(k));
  return out;
}

std::vector<json> Store::droplets() {
  refresh();
  std::vector<json> out;
  for (const auto& [id, d] : droplets_) out.push_back(droplet_json(d));
  return out;
}

}  // namespace runara::sim::fakedo
