// Deletes the SSH keys a run registered with the account and confirms they are gone: part of
// every run cleanup (the run's own teardown, the guardian, `runara reap`), run by RunCleanup
// beside the droplets.
//
// A key is found by the fingerprint the ledger recorded before its POST, so an intent whose
// POST never answered is resolved the same way (GET by fingerprint: 404 = never made or
// already gone). It is deleted only if the API's key has both the recorded name and
// fingerprint (ownership.hpp); otherwise it is reported, never touched. One GET and one DELETE
// per key: the keys list (10 requests a minute) is never read. The private key file goes once
// the key is gone.
//
// Contract: loop thread only; the DoClient and Ledger outlive it; destroying it cancels its
// calls and no callback follows.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <uv.h>

#include "cloud/cleanup_report.hpp"
#include "cloud/do_client.hpp"
#include "cloud/ledger.hpp"
#include "base/delayed_calls.hpp"

namespace runara {

class KeyCleanup {
 public:
  struct Limits {
    double poll_s = 3;
    double give_up_at = 0;  // monotonic seconds; retries stop then
    // A POST that never answered may still land this long after its intent was recorded: until
    // then a 404 for an intent without an id is asked again, not taken as "never made".
    double max_create_s = 45;
  };
  KeyCleanup(uv_loop_t* loop, DoClient& client, Ledger& ledger, std::vector<LedgerKey> keys, Limits limits,
             std::function<void(const std::string&)> log, std::function<void()> changed);
  ~KeyCleanup();
  KeyCleanup(const KeyCleanup&) = delete;
  KeyCleanup& operator=(const KeyCleanup&) = delete;

  void start();
  bool finished() const;  // every key gone or refused
  void stop();            // cancel calls still running
  void report(std::vector<Destroyed>& destroyed, std::vector<std::string>& remaining,
              std::vector<std::string>& refused) const;
  std::string pending() const;  // "ssh key runara-abc"
  std::string last_error() const { return last_error_; }

 private:
  struct Target {
    LedgerKey key;
    bool gone = false;
    bool given_up = false;  // retries over (401/403, budget): reported as remaining
    std::string refused;
  };
  void look(const std::string& name);
  void erase(const std::string& name);
  void gone(const std::string& name, const std::string& how);
  void retry(const std::string& name, const DoResult& result, void (KeyCleanup::*step)(const std::string&));

  uv_loop_t* loop_;
  DoClient& client_;
  Ledger& ledger_;
  Limits limits_;
  std::function<void(const std::string&)> log_;
  std::function<void()> changed_;
  std::map<std::string, Target> targets_;
  std::string last_error_;
  DelayedCalls delayed_;
  std::vector<DoClient::OpId> ops_;
};

}  // namespace runara
