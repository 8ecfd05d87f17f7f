#include "cloud/run_cleanup.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>

#include "cloud/ownership.hpp"
#include "base/clock.hpp"

namespace runara {

namespace {
double unix_now() { return static_cast<double>(std::time(nullptr)); }

bool has_tag(const nlohmann::json& droplet, const std::string& tag) {
  return check_droplet_owned(droplet, tag).ok();
}

std::string row_text(const LedgerEntry& e) {
  return (e.droplet_id ? std::to_string(*e.droplet_id) : std::string("(no id)")) + " (" + e.name + ")";
}

}  // namespace

CleanupOptions::CleanupOptions() {
  if (const char* poll = std::getenv("RUNARA_POLL_S"); poll && std::atof(poll) > 0) poll_s = std::atof(poll);
}

RunCleanup::RunCleanup(uv_loop_t* loop, DoClient& client, Ledger& ledger, std::string run_id,
                       std::string tag, CleanupOptions options, std::function<void(const std::string&)> log)
    : loop_(loop), client_(client), ledger_(ledger), run_id_(std::move(run_id)), tag_(std::move(tag)),
      options_(options), log_(std::move(log)), delayed_(loop) {}

RunCleanup::~RunCleanup() { stop_everything(); }

// Nothing of a finished cleanup may keep the loop alive or call back into it.
void RunCleanup::stop_everything() {
  if (keys_) keys_->stop();
  if (network_) network_->stop();
  for (DoClient::OpId op : ops_) client_.cancel(op);
  ops_.clear();
  delayed_.cancel_all();
}

void RunCleanup::start(std::function<void(CleanupReport)> done) {
  done_ = std::move(done);
  give_up_at_ = monotonic_seconds() + options_.budget_s;
  delayed_.after(options_.budget_s, [this] { finish(); });  // the budget holds even if calls hang in retries
  last_answer_ = monotonic_seconds();
  if (options_.unreachable_s > 0) watch_reachability();
  const std::string api = normalized_api_base(client_.api_base());
  for (const auto& e : ledger_.pending(run_id_)) {
    if (e.api_base != api) {
      foreign_rows_.push_back(row_text(e) + ": recorded at " + e.api_base + ", not " + api + "; not touched");
    } else if (!options_.account.empty() && !e.account.empty() && e.account != options_.account) {
      foreign_rows_.push_back(row_text(e) + ": recorded under another account than the token's; not touched");
    }
  }
  start_keys(api);
  prepare_network(api);
  for (const auto& entry : rows()) {
    if (!entry.droplet_id) continue;
    if (options_.own_creates.count(*entry.droplet_id)) {
      destroy(*entry.droplet_id);
    } else {
      verify(*entry.droplet_id);
    }
  }
  list();
}

void RunCleanup::start_keys(const std::string& api) {
  std::vector<LedgerKey> mine;
  for (auto& key : ledger_.pending_keys(run_id_)) {
    if (key.api_base != api) {
      foreign_rows_.push_back("ssh key " + key.name + ": recorded at " + key.api_base + ", not " + api + "; not touched");
    } else if (!options_.account.empty() && !key.account.empty() && key.account != options_.account) {
      foreign_rows_.push_back("ssh key " + key.name + ": recorded under another account than the token's; not touched");
    } else {
      mine.push_back(std::move(key));
    }
  }
  if (mine.empty()) return;
  KeyCleanup::Limits limits{options_.poll_s, give_up_at_, options_.max_create_s};
  keys_ = std::make_unique<KeyCleanup>(loop_, client_, ledger_, std::move(mine), limits, log_, [this] { maybe_finish(); });
  keys_->start();
}

void RunCleanup::prepare_network(const std::string& api) {
  std::vector<LedgerResource> mine;
  for (auto& r : ledger_.pending_resources(run_id_)) {
    const std::string what = r.kind + " " + r.name;
    if (r.api_base != api) {
      foreign_rows_.push_back(what + ": recorded at " + r.api_base + ", not " + api + "; not touched");
    } else if (!options_.account.empty() && !r.account.empty() && r.account != options_.account) {
      foreign_rows_.push_back(what + ": recorded under another account than the token's; not touched");
    } else {
      mine.push_back(std::move(r));
    }
  }
  if (mine.empty()) return;
  NetworkCleanup::Limits limits;
  limits.poll_s = options_.poll_s;
  limits.give_up_at = give_up_at_;
  limits.max_create_s = options_.max_create_s;
  network_ = std::make_unique<NetworkCleanup>(loop_, client_, ledger_, tag_, std::move(mine), limits, log_,
                                              [this] { maybe_finish(); });
}

std::vector<LedgerEntry> RunCleanup::rows() {
  const std::string api = normalized_api_base(client_.api_base());
  std::vector<LedgerEntry> out;
  for (auto& e : ledger_.pending(run_id_)) {
    if (e.api_base != api) continue;
    if (!options_.account.empty() && !e.account.empty() && e.account != options_.account) continue;
    out.push_back(std::move(e));
  }
  return out;
}

// An id the ledger holds but this process did not see created: the id may belong to someone
// else here (another endpoint reused it, the ledger was copied): only the run's tag proves it.
void RunCleanup::verify(std::int64_t id) {
  if (finished_ || gone_.count(id) || refused_.count(id)) return;
  auto& target = targets_[id];
  for (const auto& entry : rows()) {
    if (entry.droplet_id == id) target.name = entry.name;
  }
  track(client_.get_droplet(id, [this, id](DoResult result) {
    if (finished_) return;
    if (result.status != 0) last_answer_ = monotonic_seconds();
    if (result.status == 404) {
      ledger_.mark_destroyed(client_.api_base(), id);
      gone_.insert(id);
      log_("droplet " + std::to_string(id) + " (" + targets_[id].name + ") is already gone");
      return maybe_finish();
    }
    if (result.ok) {
      const auto droplet = result.body.value("droplet", nlohmann::json::object());
      if (has_tag(droplet, tag_)) return destroy(id);
      return refuse(id, "droplet " + std::to_string(id) + " ('" + droplet.value("name", "") + "') at " +
                            client_.api_base() + " does not carry the tag " + tag_ +
                            ": it is not this run's, so it is not deleted");
    }
    last_error_ = result.error;
    if (result.status == 401 || result.status == 403 || monotonic_seconds() >= give_up_at_) return maybe_finish();
    delayed_.after(options_.poll_s, [this, id] { verify(id); });
  }));
}

void RunCleanup::refuse(std::int64_t id, const std::string& why) {
  targets_.erase(id);
  refused_[id] = why;
  log_(why);
  maybe_finish();
}

// An API that does not answer at all will not answer in time: report (the guardian goes on).
void RunCleanup::watch_reachability() {
  delayed_.after(1, [this] {
    if (finished_) return;
    if (monotonic_seconds() - last_answer_ > options_.unreachable_s) {
      last_error_ = "the API has not answered for " + std::to_string(static_cast<int>(options_.unreachable_s)) +
                    " s" + (last_error_.empty() ? "" : " (" + last_error_ + ")");
      return finish();
    }
    watch_reachability();
  });
}

bool RunCleanup::has_unresolved_intents() {
  bool open = false;
  for (const auto& entry : rows()) {
    if (entry.droplet_id) continue;
    if (unix_now() - entry.created_at > options_.max_create_s && listed_once_) {
      ledger_.mark_create_failed(entry.name);  // no listing shows it and it can no longer land
    } else {
      open = true;
    }
  }
  return open;
}

void RunCleanup::list() {
  if (finished_ || listing_) return;
  listing_ = true;
  track(client_.list_droplets(tag_, [this](DoResult result) {
    listing_ = false;
    on_listed(result);
  }));
}

void RunCleanup::on_listed(const DoResult& result) {
  if (finished_) return;
  if (result.status != 0) last_answer_ = monotonic_seconds();
  if (!result.ok) {
    last_error_ = result.error;
    // A rejected token does not get better by asking again.
    if (result.status == 401 || result.status == 403 || monotonic_seconds() >= give_up_at_) return finish();
    return delayed_.after(options_.poll_s, [this] { list(); });
  }
  listed_once_ = true;
  for (const auto& droplet : result.body.value("droplets", nlohmann::json::array())) {
    const std::int64_t id = droplet.value("id", std::int64_t{0});
    const std::string name = droplet.value("name", "");
    if (!id || gone_.count(id) || targets_.count(id) || refused_.count(id)) continue;
    if (!has_tag(droplet, tag_)) continue;  // the API's filter is not trusted alone
    if (auto entry = ledger_.find(name); entry && !entry->droplet_id) ledger_.record_id(name, id);
    targets_[id].name = name;
    destroy(id);
  }
  if (has_unresolved_intents() && monotonic_seconds() < give_up_at_) {
    delayed_.after(options_.poll_s, [this] { list(); });
    return;
  }
  maybe_finish();
}

void RunCleanup::destroy(std::int64_t id) {
  if (finished_ || gone_.count(id)) return;
  auto& target = targets_[id];
  if (target.name.empty()) {
    for (const auto& entry : ledger_.pending(run_id_)) {
      if (entry.droplet_id == id) target.name = entry.name;
    }
  }
  track(client_.delete_droplet(id, [this, id](DoResult result) { on_deleted(id, result); }));
}

void RunCleanup::on_deleted(std::int64_t id, const DoResult& result) {
  if (finished_) return;
  if (result.status != 0) last_answer_ = monotonic_seconds();
  if (!result.ok) {
    last_error_ = result.error;
    if (monotonic_seconds() >= give_up_at_) return maybe_finish();
    return delayed_.after(options_.poll_s, [this, id] { destroy(id); });
  }
  targets_[id].deleted = true;
  ledger_.mark_destroying(client_.api_base(), id);
  if (result.status == 404) {
    ledger_.mark_destroyed(client_.api_base(), id);
    gone_.insert(id);
    log_("droplet " + std::to_string(id) + " (" + targets_[id].name + ") is gone");
    if (on_gone) on_gone(targets_[id].name);
    return maybe_finish();
  }
  delayed_.after(options_.poll_s, [this, id] { confirm(id); });
}

void RunCleanup::confirm(std::int64_t id) {
  if (finished_) return;
  track(client_.get_droplet(id, [this, id](DoResult result) {
    if (result.status != 0) last_answer_ = monotonic_seconds();
    if (result.status == 404) {
      ledger_.mark_destroyed(client_.api_base(), id);
      gone_.insert(id);
      log_("droplet " + std::to_string(id) + " (" + targets_[id].name + ") is gone");
      if (on_gone) on_gone(targets_[id].name);
      return maybe_finish();
    }
    if (!result.ok) last_error_ = result.error;
    if (monotonic_seconds() >= give_up_at_) return maybe_finish();
    delayed_.after(options_.poll_s, [this, id] { confirm(id); });
  }));
}

// Calls still running when the cleanup ends are cancelled: their callbacks would reach a
// finished (or destroyed) cleanup.
void RunCleanup::track(DoClient::OpId op) { ops_.push_back(op); }

void RunCleanup::maybe_finish() {
  if (finished_ || listing_) return;
  const bool timed_out = monotonic_seconds() >= give_up_at_;
  bool all_gone = listed_once_;
  for (const auto& [id, target] : targets_) all_gone = all_gone && gone_.count(id);
  // Creates of unknown outcome keep the listing going (on_listed) until they show up or can
  // no longer land; finishing now would leave them unwatched.
  const bool keys_done = !keys_ || keys_->finished();
  const bool droplets_done = all_gone && !has_unresolved_intents();
  // Dependency order: the firewall and the VPC only once no droplet of the run is left.
  if (droplets_done && network_ && !network_->started()) network_->start();
  const bool network_done = !network_ || network_->finished();
  if (timed_out || (droplets_done && keys_done && network_done)) finish();
}

void RunCleanup::finish() {
  if (finished_) return;
  finished_ = true;
  stop_everything();
  CleanupReport report;
  report.error = last_error_;
  if (keys_) {
    keys_->report(report.destroyed, report.remaining, report.refused);
    if (report.error.empty()) report.error = keys_->last_error();
  }
  if (network_) {
    network_->report(report.destroyed, report.remaining, report.refused);
    if (report.error.empty()) report.error = network_->last_error();
  }
  for (const auto& [id, target] : targets_) {
    const std::string what = std::to_string(id) + " (" + target.name + ")";
    if (gone_.count(id)) report.destroyed.push_back({"droplet", what, id});
    else report.remaining.push_back(what);
  }
  if (!listed_once_) report.remaining.push_back("droplets tagged " + tag_ + " (the API could not be listed)");
  for (const auto& [id, why] : refused_) report.refused.push_back(why);
  report.refused.insert(report.refused.end(), foreign_rows_.begin(), foreign_rows_.end());
  for (const auto& entry : rows()) {
    if (!entry.droplet_id) report.remaining.push_back("a create of " + entry.name + " whose outcome is unknown");
  }
  auto done = std::move(done_);
  if (done) done(report);
}

std::string RunCleanup::pending() const {
  std::string out;
  for (const auto& [id, target] : targets_) {
    if (gone_.count(id)) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(id) + " (" + target.name + (target.deleted ? ", deleting" : "") + ")";
  }
  std::string keys = keys_ ? keys_->pending() : "";
  std::string droplets = out.empty() ? (listing_ ? "listing droplets tagged " + tag_ : "") : "destroying droplets " + out;
  if (!keys.empty()) droplets += (droplets.empty() ? "deleting " : "; deleting ") + keys;
  const std::string network = network_ ? network_->pending() : "";
  if (!network.empty()) droplets += (droplets.empty() ? "deleting " : "; deleting ") + network;
  return droplets;
}

}  // namespace runara
