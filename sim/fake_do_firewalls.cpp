#include "sim/fake_do_firewalls.hpp"

#include <algorithm>

#include "sim/fake_do_support.hpp"

namespace runara::sim::fakedo {

using nlohmann::json;

namespace {

Reply unprocessable(const std::string& message) { return error_reply(422, "unprocessable_entity", message); }
Reply unparsable() { return error_reply(400, "bad_request", "error parsing request body"); }
Reply not_found() {
  return error_reply(404, "not_found", "The resource you were accessing could not be found.");
}

// ^[a-zA-Z0-9][a-zA-Z0-9\.-]+$ (firewall.yml), at most 255 characters.
bool valid_firewall_name(const std::string& name) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (name.size() < 2 || name.size() > 255 || !alnum(name[0])) return false;
  return std::all_of(name.begin() + 1, name.end(), [&](char c) { return alnum(c) || c == '.' || c == '-'; });
}

const json& field(const json& body, const char* key) {
  static const json null_value;
  return body.contains(key) ? body[key] : null_value;
}

}  // namespace

Firewalls::Firewalls(double apply_s) : apply_s_(apply_s), rng_(std::random_device{}()) {}

Firewalls::Firewall* Firewalls::find(const std::string& id) {
  for (auto& f : firewalls_)
    if (f.id == id) return &f;
  return nullptr;
}

const Firewalls::Firewall* Firewalls::find(const std::string& id) const {
  return const_cast<Firewalls*>(this)->find(id);
}

bool Firewalls::applied(const Firewall& f) const {
  const auto after = std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(std::max(0.0, apply_s_)));
  return Steady::now() >= f.changed + after;
}

void Firewalls::touch(Firewall& f) {
  // Droplets still being taken off by an earlier change are done once it applied.
  if (applied(f)) f.removing.clear();
  f.changed = Steady::now();
}

json Firewalls::json_of(const Firewall& f) const {
  const bool done = applied(f);
  json pending = json::array();
  if (!done) {
    for (auto id : f.droplet_ids) pending.push_back({{"droplet_id", id}, {"removing", false}, {"status", "waiting"}});
    for (auto id : f.removing) pending.push_back({{"droplet_id", id}, {"removing", true}, {"status", "waiting"}});
  }
  return {{"id", f.id},
          {"name", f.name},
          {"status", done ? "succeeded" : "waiting"},
          {"inbound_rules", f.inbound_rules},
          {"outbound_rules", f.outbound_rules},
          {"created_at", iso8601(f.created)},
          {"droplet_ids", f.droplet_ids},
          {"tags", f.tags},
          {"pending_changes", pending}};
}

std::vector<json> Firewalls::all() const {
  std::vector<json> out;
  for (const auto& f : firewalls_) out.push_back(json_of(f));
  return out;
}

std::optional<Reply> Firewalls::parse_spec(const json& body, const FirewallRefs& refs, const Firewall* self,
                                           Spec& out) const {
  if (!body.is_object()) return unparsable();
  const json& name = field(body, "name");
  if (name.is_null() || (name.is_string() && name.get<std::string>().empty())) return unprocessable("Name can't be blank");
  if (!name.is_string()) return unparsable();
  out.name = name.get<std::string>();
  if (!valid_firewall_name(out.name))
    return unprocessable(
        "Name must begin with an alphanumeric character and contain only alphanumeric characters, periods and dashes.");
  for (const auto& f : firewalls_)
    if (f.name == out.name && &f != self) return error_reply(409, "conflict", "duplicate name");  // the API's words
  if (auto bad = normalise_rules(field(body, "inbound_rules"), true, refs, out.inbound_rules)) return bad;
  if (auto bad = normalise_rules(field(body, "outbound_rules"), false, refs, out.outbound_rules)) return bad;
  if (out.inbound_rules.empty() && out.outbound_rules.empty())  // firewalls_create.yml
    return unprocessable("The request must contain at least one inbound or outbound access rule.");
  if (auto bad = check_droplet_ids(field(body, "droplet_ids"), refs, out.droplet_ids)) return bad;
  if (auto bad = check_tags(field(body, "tags"), refs, out.tags)) return bad;
  return std::nullopt;
}

Reply Firewalls::create(const json& body, const FirewallRefs& refs, Wall::time_point now) {
  Spec spec;
  if (auto bad = parse_spec(body, refs, nullptr, spec)) return *bad;
  Firewall f;
  f.id = uuid4(rng_);
  f.name = spec.name;
  f.inbound_rules = spec.inbound_rules;
  f.outbound_rules = spec.outbound_rules;
  f.droplet_ids = spec.droplet_ids;
  f.tags = spec.tags;
  f.created = now;
  f.changed = Steady::now();
  firewalls_.push_back(f);
  return {202, json{{"firewall", json_of(firewalls_.back())}}};
}

Reply Firewalls::list(const PageRequest& page) const { return {200, paginate("firewalls", all(), page)}; }

Reply Firewalls::get(const std::string& id) const {
  const Firewall* f = find(id);
  if (!f) return not_found();
  return {200, json{{"firewall", json_of(*f)}}};
}

Reply Firewalls::replace(const std::string& id, const json& body, const FirewallRefs& refs) {
  Firewall* f = find(id);
  if (!f) return not_found();
  Spec spec;
  if (auto bad = parse_spec(body, refs, f, spec)) return *bad;
  touch(*f);
  for (auto old : f->droplet_ids)
    if (std::find(spec.droplet_ids.begin(), spec.droplet_ids.end(), old) == spec.droplet_ids.end())
      f->removing.push_back(old);
  // firewalls_update.yml: attributes not provided are reset to their defaults.
  f->name = spec.name;
  f->inbound_rules = spec.inbound_rules;
  f->outbound_rules = spec.outbound_rules;
  f->droplet_ids = spec.droplet_ids;
  f->tags = spec.tags;
  return {200, json{{"firewall", json_of(*f)}}};
}

Reply Firewalls::remove(const std::string& id) {
  Firewall* f = find(id);
  if (!f) return not_found();
  firewalls_.erase(firewalls_.begin() + (f - firewalls_.data()));
  return {204, nullptr};
}

Reply Firewalls::change_droplets(const std::string& id, const json& body, const FirewallRefs& refs, bool add) {
  Firewall* f = find(id);
  if (!f) return not_found();
  if (!body.is_object() || !body.contains("droplet_ids") || !body["droplet_ids"].is_array()) return unparsable();
  std::vector<std::int64_t> ids;
  if (auto bad = check_droplet_ids(body["droplet_ids"], refs, ids)) return *bad;
  touch(*f);
  for (auto d : ids) {
    const auto at = std::find(f->droplet_ids.begin(), f->droplet_ids.end(), d);
    if (add && at == f->droplet_ids.end()) f->droplet_ids.push_back(d);
    if (!add && at != f->droplet_ids.end()) {
      f->droplet_ids.erase(at);
      f->removing.push_back(d);
    }
  }
  return {204, nullptr};
}

Reply Firewalls::change_tags(const std::string& id, const json& body, const FirewallRefs& refs, bool add) {
  Firewall* f = find(id);
  if (!f) return not_found();
  if (!body.is_object() || !body.contains("tags") || !body["tags"].is_array()) return unparsable();
  std::vector<std::string> tags;
  if (auto bad = check_tags(body["tags"], refs, tags)) return *bad;
  touch(*f);
  for (const auto& t : tags) {
    const auto at = std::find(f->tags.begin(), f->tags.end(), t);
    if (add && at == f->tags.end()) f->tags.push_back(t);
    if (!add && at != f->tags.end()) f->tags.erase(at);
  }
  return {204, nullptr};
}

Reply Firewalls::change_rules(const std::string& id, const json& body, const FirewallRefs& refs, bool add) {
  Firewall* f = find(id);
  if (!f) return not_found();
  if (!body.is_object()) return unparsable();
  json inbound, outbound;
  if (auto bad = normalise_rules(field(body, "inbound_rules"), true, refs, inbound)) return *bad;
  if (auto bad = normalise_rules(field(body, "outbound_rules"), false, refs, outbound)) return *bad;
  if (inbound.empty() && outbound.empty())  // firewalls_add_rules.yml: one of the two is required
    return unprocessable("The request must contain at least one inbound or outbound access rule.");
  touch(*f);
  auto apply = [add](json& rules, const json& change) {
    for (const auto& r : change) {
      const auto at = std::find(rules.begin(), rules.end(), r);
      if (add && at == rules.end()) rules.push_back(r);
      if (!add && at != rules.end()) rules.erase(at);
    }
  };
  apply(f->inbound_rules, inbound);
  apply(f->outbound_rules, outbound);
  return {204, nullptr};
}

}  // namespace runara::sim::fakedo
