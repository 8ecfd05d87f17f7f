// The leftovers of earlier runs, checked against the API; see leftover_survey.hpp.
#include "cloud/leftover_survey.hpp"

#include <ctime>
#include <map>
#include <set>

#include "base/text.hpp"
#include "cloud/ownership.hpp"
#include "cloud/resource_kinds.hpp"

namespace runara {

namespace {

const std::string kRunTagPrefix = "runara:run-";

std::string run_of(const nlohmann::json& droplet) {
  for (const auto& tag : droplet.value("tags", nlohmann::json::array())) {
    if (tag.is_string() && tag.get<std::string>().rfind(kRunTagPrefix, 0) == 0) {
      return tag.get<std::string>().substr(kRunTagPrefix.size());
    }
  }
  return {};
}

double parse_time(const std::string& text) {
  std::tm tm{};
  return strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) ? static_cast<double>(timegm(&tm)) : 0;
}

Leftover from_ledger(const LedgerEntry& e) {
  Leftover l;
  l.run_id = e.run_id;
  l.name = e.name;
  l.size = e.size;
  l.region = e.region;
  l.source = "ledger";
  l.id = e.droplet_id.value_or(0);
  l.created_at = e.created_at;
  if (e.price_hourly > 0) l.price_hourly = e.price_hourly;
  l.status = "unchecked (ledger: " + std::string(to_string(e.state)) + ")";
  return l;
}

// The API's view of a droplet into a row (the ledger's run id stays if the row has one).
void take_api_view(Leftover& l, const nlohmann::json& d) {
  l.checked = true;
  l.status = d.value("status", "");
  l.name = d.value("name", l.name);
  l.size = d.value("size_slug", l.size);
  if (d.contains("region") && d["region"].is_object()) l.region = d["region"].value("slug", l.region);
  if (d.contains("size") && d["size"].is_object() && d["size"].contains("price_hourly")) {
    l.price_hourly = d["size"].value("price_hourly", 0.0);
  }
  if (const double t = parse_time(d.value("created_at", "")); t > 0) l.created_at = t;
  for (const auto& net : d.value("networks", nlohmann::json::object()).value("v4", nlohmann::json::array())) {
    if (net.value("type", "") == "public") l.ip = net.value("ip_address", "");
  }
  const std::string run = run_of(d);
  if (l.run_id.empty()) l.run_id = run;
  if (run != l.run_id) {
    l.foreign = true;
    l.status = "not runara's (no tag " + kRunTagPrefix + l.run_id + "; never deleted)";
  }
}

std::string account_error(const DoResult& r) {
  if (r.status == 401 || r.status == 403) return "the API refused the token (" + r.error + ")";
  return "could not reach the API (" + r.error + ")";
}

void count_elsewhere(Ledger& ledger, const std::string& api, const std::string& account, Survey& s) {
  std::map<std::string, int> per_place;
  for (const auto& e : ledger.pending_all()) {
    if (e.api_base != api) ++per_place[e.api_base + " (another API endpoint)"];
    else if (!account.empty() && !e.account.empty() && e.account != account) ++per_place["another account at " + api];
  }
  for (const auto& [place, n] : per_place) s.elsewhere.push_back(std::to_string(n) + " at " + place);
}

// One ledger row against the listing, else its own GET. False: the droplet is gone.
bool check_row(Leftover& l, const std::map<std::int64_t, nlohmann::json>& listed, ApiSession& api, Ledger& ledger,
               Survey& s) {
  if (auto it = listed.find(l.id); it != listed.end()) {
    take_api_view(l, it->second);
    return true;
  }
  const DoResult r = api.get_droplet(l.id);
  if (r.status == 404) {
    ledger.mark_destroyed(s.api_base, l.id);
    return false;
  }
  if (!r.ok) {
    s.error = "could not ask the API about droplet " + std::to_string(l.id) + " (" + r.error + ")";
    return true;
  }
  take_api_view(l, r.body.value("droplet", nlohmann::json::object()));
  return true;
}

// The runs' SSH keys at this API and account: one GET by fingerprint each (never the key list,
// which allows 10 requests a minute). 404 closes the ledger row.
void add_keys(Ledger& ledger, ApiSession* api, Survey& s) {
  for (const auto& k : ledger.pending_keys_all()) {
    if (k.api_base != s.api_base || (!s.account.empty() && !k.account.empty() && k.account != s.account)) continue;
    Leftover l;
    l.kind = "ssh_key";
    l.run_id = k.run_id;
    l.name = k.name;
    l.size = "(ssh key)";
    l.source = "ledger";
    l.id = k.key_id.value_or(0);
    l.created_at = k.created_at;
    l.private_key_path = k.private_key_path;
    l.status = "unchecked (ledger: " + std::string(to_string(k.state)) + ")";
    if (s.error.empty() && api) {
      const DoResult r = api->get_key(k.fingerprint);
      if (r.status == 404 && k.key_id) {
        ledger.mark_key(k.name, ResourceState::destroyed);
        continue;
      }
      if (r.ok) {
        l.checked = true;
        const std::string why = check_key_owned(r.body.value("ssh_key", nlohmann::json::object()), k.name, k.fingerprint).error();
        l.foreign = !why.empty();
        l.status = why.empty() ? "registered" : "not runara's (" + why + "; never deleted)";
      } else if (r.status == 404) {
        l.status = "register of unknown outcome (not found yet)";
      } else {
        s.error = "could not ask the API about ssh key " + k.name + " (" + r.error + ")";
      }
    }
    s.rows.push_back(std::move(l));
  }
}

// The runs' VPCs and firewalls at this API and account: one GET by id each. 404 closes the row.
void add_resources(Ledger& ledger, ApiSession* api, Survey& s) {
  for (const auto& r : ledger.pending_resources_all()) {
    if (r.api_base != s.api_base || (!s.account.empty() && !r.account.empty() && r.account != s.account)) continue;
    Leftover l;
    l.kind = r.kind;
    l.run_id = r.run_id;
    l.name = r.name;
    l.region = r.region;
    l.size = "(" + r.kind + ")";
    l.source = "ledger";
    l.remote_id = r.remote_id.value_or("");
    l.created_at = r.created_at;
    l.status = "unchecked (ledger: " + std::string(to_string(r.state)) + ")";
    const ResourceKind* kind = find_resource_kind(r.kind);
    if (s.error.empty() && api && kind && r.remote_id) {
      const DoResult got = api->get_resource(std::string(kind->collection) + "/" + url_encode(*r.remote_id));
      if (got.status == 404) {
        ledger.mark_resource(r.kind, r.name, ResourceState::destroyed);
        continue;
      }
      if (got.ok) {
        l.checked = true;
        const auto item = got.body.value(std::string(kind->item_key), nlohmann::json::object());
        const std::string why = check_resource_owned(item, r.kind, r.name, kRunTagPrefix + r.run_id).error();
        l.foreign = !why.empty();
        l.status = why.empty() ? "exists" : "not runara's (" + why + "; never deleted)";
      } else {
        s.error = "could not ask the API about " + r.kind + " " + r.name + " (" + got.error + ")";
      }
    } else if (s.error.empty() && api && !r.remote_id) {
      l.status = "create of unknown outcome (no id yet)";
    }
    s.rows.push_back(std::move(l));
  }
}

}  // namespace

Leftover leftover_from_api(const nlohmann::json& droplet) {
  Leftover l;
  l.id = droplet.value("id", std::int64_t{0});
  l.source = "account tag";
  take_api_view(l, droplet);
  return l;
}

Survey survey_leftovers(Ledger& ledger, const std::string& api_base, ApiSession* api) {
  Survey s;
  s.api_base = normalized_api_base(api_base);
  if (!api) s.error = "no DigitalOcean token (set DIGITALOCEAN_TOKEN), so the API was not asked";
  DoResult account;
  if (api && !(account = api->get_account()).ok) s.error = account_error(account);
  if (s.error.empty()) s.account = account.body.value("account", nlohmann::json::object()).value("uuid", "");
  count_elsewhere(ledger, s.api_base, s.account, s);
  std::map<std::int64_t, nlohmann::json> listed;
  if (s.error.empty()) {
    const DoResult list = api->list_droplets("runara");
    if (!list.ok) s.error = "could not list the account's runara droplets (" + list.error + ")";
    for (const auto& d : list.body.value("droplets", nlohmann::json::array())) {
      listed[d.value("id", std::int64_t{0})] = d;
    }
  }
  std::set<std::int64_t> in_ledger;
  for (const auto& e : ledger.pending_at(s.api_base)) {
    if (!s.account.empty() && !e.account.empty() && e.account != s.account) continue;
    Leftover l = from_ledger(e);
    if (l.id) in_ledger.insert(l.id);
    if (s.error.empty() && l.id && !check_row(l, listed, *api, ledger, s)) continue;
    if (s.error.empty() && !l.id) l.status = "create of unknown outcome (no id yet)";
    s.rows.push_back(std::move(l));
  }
  for (const auto& [id, d] : listed) {
    if (in_ledger.count(id) || run_of(d).empty()) continue;
    Leftover l;
    l.id = id;
    l.source = "account tag";
    take_api_view(l, d);
    s.rows.push_back(std::move(l));
  }
  add_keys(ledger, api, s);
  add_resources(ledger, api, s);
  return s;
}

}  // namespace runara
