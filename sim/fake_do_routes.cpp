#include "sim/fake_do_routes.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "base/json_limits.hpp"
#include "sim/fake_do_support.hpp"

namespace runara::sim::fakedo {

using nlohmann::json;

namespace {

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    std::size_t j = i;
    while (j < path.size() && path[j] != '/') ++j;
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

std::optional<std::string> param(const ApiRequest& req, const std::string& key) {
  const auto it = req.params.find(key);
  if (it == req.params.end()) return std::nullopt;
  return it->second;
}

PageRequest page_of(const ApiRequest& req, const std::string& path,
                    std::vector<std::pair<std::string, std::string>> extra = {}) {
  PageRequest p;
  p.base_url = req.base_url;
  p.path = path;
  p.per_page = req.per_page_default;
  if (const auto v = param(req, "per_page")) {
    const auto n = parse_int(*v);
    if (n && *n >= 1) p.per_page = static_cast<int>(std::min<std::int64_t>(*n, 200));
  }
  if (const auto v = param(req, "page")) {
    const auto n = parse_int(*v);
    if (n && *n >= 1) p.page = static_cast<int>(std::min<std::int64_t>(*n, 1000000));
  }
  p.extra = std::move(extra);
  return p;
}

std::optional<std::int64_t> positive_id(const std::string& text) {
  const auto n = parse_int(text);
  if (!n || *n < 1) return std::nullopt;
  return n;
}

Reply not_found() {
  return error_reply(404, "not_found", "The resource you were accessing could not be found.");
}

Reply with_body(const ApiRequest& req, const std::function<Reply(const json&)>& f) {
  std::string error;
  const auto body = parse_json_limited(req.body, error);
  if (!body) {  // DigitalOcean's own words; a body too deep to walk safely also says why
    return error_reply(400, "bad_request", is_json_too_deep(error) ? "error parsing request body: " + error
                                                                        : "error parsing request body");
  }
  return f(*body);
}

Reply droplets_collection(Store& store, const ApiRequest& req) {
  if (req.method == "GET") {
    DropletFilter filter;
    std::vector<std::pair<std::string, std::string>> extra;
    for (const char* key : {"tag_name", "name", "type"}) {
      if (const auto v = param(req, key)) {
        extra.emplace_back(key, *v);
        if (std::string(key) == "tag_name") filter.tag_name = v;
        if (std::string(key) == "name") filter.name = v;
        if (std::string(key) == "type") filter.type = v;
      }
    }
    return store.list_droplets(filter, page_of(req, "/v2/droplets", std::move(extra)));
  }
  if (req.method == "POST") return with_body(req, [&](const json& b) { return store.create_droplets(b); });
  if (req.method == "DELETE") {
    const auto tag = param(req, "tag_name");
    if (!tag || tag->empty())
      return error_reply(422, "unprocessable_entity", "tag_name is required to delete Droplets by tag");
    return store.delete_droplets_by_tag(*tag);
  }
  return not_found();
}

Reply vpcs(Store& store, const ApiRequest& req, const std::vector<std::string>& s) {
  const std::string& m = req.method;
  if (s.size() == 2) {
    if (m == "GET") return store.list_vpcs(page_of(req, "/v2/vpcs"));
    if (m == "POST") return with_body(req, [&](const json& b) { return store.create_vpc(b); });
    return not_found();
  }
  const std::string& id = s[2];
  if (s.size() == 3) {
    if (m == "GET") return store.get_vpc(id);
    if (m == "PUT") return with_body(req, [&](const json& b) { return store.update_vpc(id, b, false); });
    if (m == "PATCH") return with_body(req, [&](const json& b) { return store.update_vpc(id, b, true); });
    if (m == "DELETE") return store.delete_vpc(id);
    return not_found();
  }
  if (s.size() == 4 && s[3] == "members" && m == "GET") {
    const auto type = param(req, "resource_type");
    std::vector<std::pair<std::string, std::string>> extra;
    if (type) extra.emplace_back("resource_type", *type);
    return store.vpc_members(id, type, page_of(req, "/v2/vpcs/" + id + "/members", std::move(extra)));
  }
  return not_found();
}

Reply firewalls(Store& store, const ApiRequest& req, const std::vector<std::string>& s) {
  const std::string& m = req.method;
  if (s.size() == 2) {
    if (m == "GET") return store.list_firewalls(page_of(req, "/v2/firewalls"));
    if (m == "POST") return with_body(req, [&](const json& b) { return store.create_firewall(b); });
    return not_found();
  }
  const std::string& id = s[2];
  if (s.size() == 3) {
    if (m == "GET") return store.get_firewall(id);
    if (m == "PUT") return with_body(req, [&](const json& b) { return store.update_firewall(id, b); });
    if (m == "DELETE") return store.delete_firewall(id);
    return not_found();
  }
  const bool part = s.size() == 4 && (s[3] == "droplets" || s[3] == "tags" || s[3] == "rules");
  if (part && (m == "POST" || m == "DELETE"))
    return with_body(req, [&](const json& b) { return store.change_firewall(id, s[3], b, m == "POST"); });
  return not_found();
}

}  // namespace

std::string request_line(const ApiRequest& req) {
  std::string line = req.method + " ";
  for (const auto& part : segments(req.path)) line += "/" + part;
  return line;
}

bool is_key_list(const ApiRequest& req) {
  return req.method == "GET" && segments(req.path) == std::vector<std::string>{"v2", "account", "keys"};
}

Reply route(Store& store, const ApiRequest& req) {
  const auto s = segments(req.path);
  const std::string& m = req.method;
  if (s.size() < 2 || s[0] != "v2") return not_found();
  const std::string& resource = s[1];

  if (resource == "droplets") {
    if (s.size() == 2) return droplets_collection(store, req);
    const auto id = positive_id(s[2]);
    if (!id) return not_found();
    if (s.size() == 3) {
      if (m == "GET") return store.get_droplet(*id);
      if (m == "DELETE") return store.delete_droplet(*id);
      return not_found();
    }
    if (s.size() == 4 && s[3] == "actions" && m == "GET")
      return store.droplet_actions(*id, page_of(req, "/v2/droplets/" + s[2] + "/actions"));
    return not_found();
  }

  if (resource == "actions" && m == "GET") {
    if (s.size() == 2) return store.list_actions(page_of(req, "/v2/actions"));
    const auto id = s.size() == 3 ? positive_id(s[2]) : std::nullopt;
    return id ? store.get_action(*id) : not_found();
  }

  if (resource == "sizes" && s.size() == 2 && m == "GET") return store.list_sizes(page_of(req, "/v2/sizes"));

  if (resource == "account") {
    if (s.size() == 2 && m == "GET") return store.account();
    if (s.size() >= 3 && s[2] == "keys") {
      if (s.size() == 3) {
        if (m == "GET") return store.list_keys(page_of(req, "/v2/account/keys"));
        if (m == "POST") return with_body(req, [&](const json& b) { return store.create_key(b); });
        return not_found();
      }
      if (s.size() == 4) {
        if (m == "GET") return store.get_key(s[3]);
        if (m == "PUT") return with_body(req, [&](const json& b) { return store.update_key(s[3], b); });
        if (m == "DELETE") return store.delete_key(s[3]);
      }
    }
    return not_found();
  }

  if (resource == "tags") {
    if (s.size() == 2) {
      if (m == "GET") return store.list_tags(page_of(req, "/v2/tags"));
      if (m == "POST") return with_body(req, [&](const json& b) { return store.create_tag(b); });
      return not_found();
    }
    if (s.size() == 3) {
      if (m == "GET") return store.get_tag(s[2]);
      if (m == "DELETE") return store.delete_tag(s[2]);
    }
    return not_found();
  }

  if (resource == "vpcs") return vpcs(store, req, s);
  if (resource == "firewalls") return firewalls(store, req, s);

  return not_found();
}

}  // namespace runara::sim::fakedo
