// The run's VPC and firewall deleted in dependency order; see network_cleanup.hpp.
#include "cloud/network_cleanup.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "base/clock.hpp"
#include "base/text.hpp"
#include "cloud/ownership.hpp"

namespace runara {

NetworkCleanup::NetworkCleanup(uv_loop_t* loop, DoClient& client, Ledger& ledger, std::string run_tag,
                               std::vector<LedgerResource> rows, Limits limits,
                               std::function<void(const std::string&)> log, std::function<void()> changed)
    : client_(client), ledger_(ledger), run_tag_(std::move(run_tag)), limits_(limits),
      log_(std::move(log)), changed_(std::move(changed)), delayed_(loop) {
  for (auto& row : rows) {
    const ResourceKind* kind = find_resource_kind(row.kind);
    const std::string key = row.kind + " " + row.name;
    Target& t = targets_[key];
    t.kind = kind;
    t.row = std::move(row);
    // A kind this runara does not know (a newer one's row): reported, never guessed at.
    if (!kind) t.refused = key + ": a kind of resource this runara does not know; not touched";
  }
}

NetworkCleanup::~NetworkCleanup() { stop(); }

void NetworkCleanup::stop() {
  for (DoClient::OpId op : ops_) client_.cancel(op);
  ops_.clear();
  delayed_.cancel_all();
}

void NetworkCleanup::start() {
  if (started_) return;
  started_ = true;
  next_rank();
}

bool NetworkCleanup::finished() const {
  return std::all_of(targets_.begin(), targets_.end(), [](const auto& kv) { return kv.second.settled(); });
}

std::string NetworkCleanup::label(const Target& t) { return t.row.kind + " " + t.row.name; }

std::string NetworkCleanup::path(const Target& t) const {
  // The id is the API's text: encoded, so that no answer can turn it into another path.
  return std::string(t.kind->collection) + "/" + url_encode(t.row.remote_id.value_or(""));
}

// Begins every target of the lowest rank not yet settled; a rank waits for the one before.
void NetworkCleanup::next_rank() {
  int rank = 0;
  for (const auto& [key, t] : targets_) {
    if (!t.settled() && t.kind && (rank == 0 || t.kind->teardown_rank < rank)) rank = t.kind->teardown_rank;
  }
  if (rank == 0) return;
  std::vector<std::string> keys;
  for (auto& [key, t] : targets_) {
    if (!t.settled() && t.kind && t.kind->teardown_rank == rank && !t.begun) keys.push_back(key);
  }
  for (const auto& key : keys) begin(key);
}

void NetworkCleanup::begin(const std::string& key) {
  Target& t = targets_[key];
  t.begun = true;
  if (t.row.remote_id) return look(key);
  find_by_name(key);
}

// A create whose answer never came: the listing by name tells whether it happened.
void NetworkCleanup::find_by_name(const std::string& key) {
  const Target& t = targets_[key];
  const std::string list_key(t.kind->list_key);
  ops_.push_back(client_.list_resources(std::string(t.kind->collection), list_key, [this, key, list_key](DoResult r) {
    Target& t = targets_[key];
    if (!r.ok) return retry(key, r, &NetworkCleanup::find_by_name, limits_.poll_s);
    for (const auto& item : r.body.value(list_key, nlohmann::json::array())) {
      if (json_text(item, "name") != t.row.name || json_text(item, "id").empty()) continue;
      t.row.remote_id = json_text(item, "id");
      ledger_.record_resource_id(t.row.kind, t.row.name, *t.row.remote_id);
      return look(key);
    }
    const double age = static_cast<double>(std::time(nullptr)) - t.row.created_at;
    if (age > limits_.max_create_s || monotonic_seconds() >= limits_.give_up_at) {
      return gone(key, "was never created");  // no id: marked create_failed
    }
    delayed_.after(limits_.poll_s, [this, key] { find_by_name(key); });
  }));
}

// GET by id first: only the resource with the recorded name (and tag) is deleted.
void NetworkCleanup::look(const std::string& key) {
  const Target& t = targets_[key];
  ops_.push_back(client_.get_resource(path(t), [this, key](DoResult r) {
    Target& t = targets_[key];
    if (r.status == 404) return gone(key, "is already gone");
    if (!r.ok) return retry(key, r, &NetworkCleanup::look, limits_.poll_s);
    const auto item = r.body.value(std::string(t.kind->item_key), nlohmann::json::object());
    if (std::string why = check_resource_owned(item, t.row.kind, t.row.name, run_tag_).error(); !why.empty()) {
      t.refused = label(t) + " (" + *t.row.remote_id + ") at " + client_.api_base() + " is not this run's (" + why +
                  "), so it is not deleted";
      log_(t.refused);
      return settle();
    }
    erase(key);
  }));
}

void NetworkCleanup::erase(const std::string& key) {
  ops_.push_back(client_.delete_resource(path(targets_[key]), [this, key](DoResult r) {
    Target& t = targets_[key];
    if (r.status == 409 && t.kind->conflict_means_wait) {
      // "Can not delete VPC with members": droplets still leaving. Ask again, a little later each time.
      const double delay = std::min(limits_.max_backoff_s, limits_.poll_s * std::pow(2.0, t.conflicts++));
      if (t.conflicts == 1) log_(label(t) + ": " + r.error + "; asking again until its members are gone");
      return retry(key, r, &NetworkCleanup::erase, delay);
    }
    if (!r.ok) return retry(key, r, &NetworkCleanup::erase, limits_.poll_s);
    if (r.status == 404) return gone(key, "is gone");
    t.deleted = true;
    ledger_.mark_resource(t.row.kind, t.row.name, ResourceState::destroying);
    confirm(key);
  }));
}

void NetworkCleanup::confirm(const std::string& key) {
  ops_.push_back(client_.get_resource(path(targets_[key]), [this, key](DoResult r) {
    if (r.status == 404) return gone(key, "is gone");
    if (!r.ok) last_error_ = r.error;
    if (monotonic_seconds() >= limits_.give_up_at) {
      targets_[key].given_up = true;
      return settle();
    }
    delayed_.after(limits_.poll_s, [this, key] { confirm(key); });
  }));
}

void NetworkCleanup::gone(const std::string& key, const std::string& how) {
  Target& t = targets_[key];
  t.gone = true;
  ledger_.mark_resource(t.row.kind, t.row.name, t.row.remote_id ? ResourceState::destroyed : ResourceState::create_failed);
  log_(label(t) + " " + how);
  settle();
}

void NetworkCleanup::retry(const std::string& key, const DoResult& r, Step step, double delay_s) {
  last_error_ = r.error;
  // A rejected token does not get better by asking again; nor does time past the budget.
  if (r.status == 401 || r.status == 403 || monotonic_seconds() >= limits_.give_up_at) {
    targets_[key].given_up = true;
    return settle();
  }
  delayed_.after(delay_s, [this, key, step] { (this->*step)(key); });
}

void NetworkCleanup::settle() {
  next_rank();
  changed_();
}

void NetworkCleanup::report(std::vector<Destroyed>& destroyed, std::vector<std::string>& remaining,
                            std::vector<std::string>& refused) const {
  for (const auto& [key, t] : targets_) {
    const std::string id = t.row.remote_id ? " (" + *t.row.remote_id + ")" : "";
    if (t.gone) destroyed.push_back({t.row.kind, t.row.name + id});
    else if (!t.refused.empty()) refused.push_back(t.refused);
    else remaining.push_back(label(t) + id);
  }
}

std::string NetworkCleanup::pending() const {
  std::string out;
  for (const auto& [key, t] : targets_) {
    if (t.settled()) continue;
    out += (out.empty() ? "" : ", ") + label(t) + (t.deleted ? " (deleting)" : t.begun ? "" : " (after the droplets)");
  }
  return out;
}

}  // namespace runara
