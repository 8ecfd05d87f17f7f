// Deletes the run's VPC and firewall (the generic ledger resources, resource_kinds.hpp) and
// confirms they are gone (GET answers 404): part of every run cleanup (the run's own teardown,
// the guardian, `runara reap`), started by RunCleanup once every droplet of the run is gone.
//
// Dependency order: the kinds are taken rank by rank (firewalls, then VPCs), each rank only once
// the one before it is settled. A DELETE the API answers with 409 (a VPC whose members are still
// leaving: "Can not delete VPC with members") is asked again with backoff until the budget ends.
//
// Ownership: a resource is deleted only once a GET by the recorded id shows the recorded name
// (and, for a firewall, the run's tag) (ownership.hpp); otherwise it is reported, never touched.
// A row without an id (a create whose answer was lost) is looked for by name in the collection's
// listing: found, its id is recorded and it is deleted; not found once its create can no longer
// land (`max_create_s`), the row is marked create_failed.
//
// Contract: loop thread only; the DoClient and Ledger outlive it; destroying it cancels its
// calls and no callback follows.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <uv.h>

#include "base/delayed_calls.hpp"
#include "cloud/cleanup_report.hpp"
#include "cloud/do_client.hpp"
#include "cloud/ledger.hpp"
#include "cloud/resource_kinds.hpp"

namespace runara {

class NetworkCleanup {
 public:
  struct Limits {
    double poll_s = 3;
    double give_up_at = 0;  // monotonic seconds; retries stop then
    double max_create_s = 45;
    double max_backoff_s = 5;  // between DELETEs answered 409
  };
  NetworkCleanup(uv_loop_t* loop, DoClient& client, Ledger& ledger, std::string run_tag,
                 std::vector<LedgerResource> rows, Limits limits, std::function<void(const std::string&)> log,
                 std::function<void()> changed);
  ~NetworkCleanup();
  NetworkCleanup(const NetworkCleanup&) = delete;
  NetworkCleanup& operator=(const NetworkCleanup&) = delete;

  void start();  // call once every droplet of the run is gone
  bool started() const { return started_; }
  bool finished() const;  // every resource gone, refused or given up
  void stop();
  void report(std::vector<Destroyed>& destroyed, std::vector<std::string>& remaining,
              std::vector<std::string>& refused) const;
  std::string pending() const;  // "vpc runara-abc-vpc (deleting)"
  std::string last_error() const { return last_error_; }

 private:
  struct Target {
    LedgerResource row;
    const ResourceKind* kind = nullptr;
    bool begun = false, deleted = false, gone = false, given_up = false;
    int conflicts = 0;
    std::string refused;
    bool settled() const { return gone || given_up || !refused.empty(); }
  };
  using Step = void (NetworkCleanup::*)(const std::string&);
  void next_rank();
  void begin(const std::string& key);
  void find_by_name(const std::string& key);
  void look(const std::string& key);
  void erase(const std::string& key);
  void confirm(const std::string& key);
  void gone(const std::string& key, const std::string& how);
  void retry(const std::string& key, const DoResult& result, Step step, double delay_s);
  void settle();
  std::string path(const Target& t) const;
  static std::string label(const Target& t);

  DoClient& client_;
  Ledger& ledger_;
  std::string run_tag_;
  Limits limits_;
  std::function<void(const std::string&)> log_;
  std::function<void()> changed_;
  std::map<std::string, Target> targets_;  // by "kind name"
  bool started_ = false;
  std::string last_error_;
  DelayedCalls delayed_;
  std::vector<DoClient::OpId> ops_;
};

}  // namespace runara
