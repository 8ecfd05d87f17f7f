#include "cloud/key_cleanup.hpp"

#include <unistd.h>

#include <ctime>

#include "cloud/ownership.hpp"
#include "base/clock.hpp"

namespace runara {

KeyCleanup::KeyCleanup(uv_loop_t* loop, DoClient& client, Ledger& ledger, std::vector<LedgerKey> keys,
                       Limits limits, std::function<void(const std::string&)> log, std::function<void()> changed)
    : loop_(loop), client_(client), ledger_(ledger), limits_(limits), log_(std::move(log)),
      changed_(std::move(changed)), delayed_(loop) {
  for (auto& key : keys) {
    const std::string name = key.name;
    targets_[name].key = std::move(key);
  }
}

KeyCleanup::~KeyCleanup() { stop(); }

void KeyCleanup::stop() {
  for (DoClient::OpId op : ops_) client_.cancel(op);
  ops_.clear();
  delayed_.cancel_all();
}

void KeyCleanup::start() {
  for (const auto& [name, target] : targets_) look(name);
}

bool KeyCleanup::finished() const {
  for (const auto& [name, t] : targets_) {
    if (!t.gone && !t.given_up && t.refused.empty()) return false;
  }
  return true;
}

// GET by fingerprint first: only a key with the recorded name and fingerprint is deleted.
void KeyCleanup::look(const std::string& name) {
  const LedgerKey& key = targets_[name].key;
  ops_.push_back(client_.get_key(key.fingerprint, [this, name](DoResult result) {
    Target& t = targets_[name];
    if (result.status == 404) {
      const double age = static_cast<double>(std::time(nullptr)) - t.key.created_at;
      if (t.key.key_id || age > limits_.max_create_s || monotonic_seconds() >= limits_.give_up_at) {
        return gone(name, t.key.key_id ? "is gone" : "was never registered");
      }
      return delayed_.after(limits_.poll_s, [this, name] { look(name); });
    }
    if (!result.ok) return retry(name, result, &KeyCleanup::look);
    const auto answer = result.body.value("ssh_key", nlohmann::json::object());
    if (std::string why = check_key_owned(answer, t.key.name, t.key.fingerprint).error(); !why.empty()) {
      t.refused = "ssh key " + t.key.fingerprint + " at " + client_.api_base() + " is not this run's (" + why +
                  "), so it is not deleted";
      log_(t.refused);
      return changed_();
    }
    erase(name);
  }));
}

void KeyCleanup::erase(const std::string& name) {
  const LedgerKey& key = targets_[name].key;
  ops_.push_back(client_.delete_key(key.fingerprint, [this, name](DoResult result) {
    if (!result.ok) return retry(name, result, &KeyCleanup::erase);
    gone(name, "deleted");
  }));
}

void KeyCleanup::gone(const std::string& name, const std::string& how) {
  Target& t = targets_[name];
  t.gone = true;
  ledger_.mark_key(name, ResourceState::destroyed);
  if (!t.key.private_key_path.empty()) ::unlink(t.key.private_key_path.c_str());
  log_("ssh key " + name + " " + how);
  changed_();
}

void KeyCleanup::retry(const std::string& name, const DoResult& result, void (KeyCleanup::*step)(const std::string&)) {
  last_error_ = result.error;
  // A rejected token does not get better by asking again; nor does time past the budget.
  if (result.status == 401 || result.status == 403 || monotonic_seconds() >= limits_.give_up_at) {
    targets_[name].given_up = true;
    return changed_();
  }
  delayed_.after(limits_.poll_s, [this, name, step] { (this->*step)(name); });
}

void KeyCleanup::report(std::vector<Destroyed>& destroyed, std::vector<std::string>& remaining,
                        std::vector<std::string>& refused) const {
  for (const auto& [name, t] : targets_) {
    if (t.gone) destroyed.push_back({"ssh key", name});
    else if (!t.refused.empty()) refused.push_back(t.refused);
    else remaining.push_back("ssh key " + name + " (" + t.key.fingerprint + ")");
  }
}

std::string KeyCleanup::pending() const {
  std::string out;
  for (const auto& [name, t] : targets_) {
    if (!t.gone && t.refused.empty()) out += (out.empty() ? "" : ", ") + ("ssh key " + name);
  }
  return out;
}

}  // namespace runara
