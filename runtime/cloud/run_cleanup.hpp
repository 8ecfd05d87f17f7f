// Destroys everything a run may have left on the cloud and confirms it is gone (GET -> 404).
// One mechanism with three users: the run's own teardown, the guardian after the runtime died,
// and `runara reap`. It trusts only the ledger and the cloud's own lists, never the script.
//
// What it destroys: the run's SSH keys (key_cleanup.hpp), its VPC and firewall once every droplet
// is gone (network_cleanup.hpp: firewall, then VPC), and every ledger entry of the run that has a droplet id, plus whatever carries
// the run's tag (creates whose response never arrived). An intent without an id stays open
// until a listing shows it or it is older than `max_create_s` (its create can no longer land).
//
// What it never destroys: anything it cannot show to be the run's. Only the ids the live run
// itself saw its creates answer with (`own_creates`) are deleted on the ledger's word; every
// other id is first fetched (GET) and deleted only if it carries the run's tag (ownership.hpp,
// which also holds the check SSH keys will get), and a listed
// droplet only if its tags hold the run's tag. Ledger rows recorded at another API endpoint or
// under another account than `account` are not touched at all. All of these are reported in
// `refused`, never deleted; a 404 means already gone.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <uv.h>

#include "cloud/cleanup_report.hpp"
#include "cloud/do_client.hpp"
#include "cloud/key_cleanup.hpp"
#include "cloud/network_cleanup.hpp"
#include "cloud/ledger.hpp"
#include "base/delayed_calls.hpp"

namespace runara {

struct CleanupOptions {
  CleanupOptions();          // poll_s honours RUNARA_POLL_S (fast polling for fake APIs)
  double poll_s = 3;         // between GETs waiting for 404, and between listings
  double budget_s = 600;     // give up (and report) after this long
  double max_create_s = 45;  // a create older than this that no listing shows did not happen
  double unreachable_s = 0;  // give up early once the API has not answered for this long (0: never)
  std::set<std::int64_t> own_creates;  // ids this process's own creates answered with: no tag check
  std::string account;  // uuid of the token's account ("" unknown: rows are not filtered by account)
};

class RunCleanup {
 public:
  RunCleanup(uv_loop_t* loop, DoClient& client, Ledger& ledger, std::string run_id, std::string tag,
             CleanupOptions options, std::function<void(const std::string&)> log);
  ~RunCleanup();
  RunCleanup(const RunCleanup&) = delete;
  RunCleanup& operator=(const RunCleanup&) = delete;

  void start(std::function<void(CleanupReport)> done);
  std::string pending() const;  // "destroying droplets 123 (a), 456 (b)"
  // Told the name of each droplet once its deletion is confirmed (optional): the live run's
  // Activity::machine_gone.
  std::function<void(const std::string& name)> on_gone;

 private:
  struct Target {
    std::string name;
    bool deleted = false;  // DELETE accepted
  };
  std::vector<LedgerEntry> rows();  // the run's pending rows at this API and account
  void start_keys(const std::string& api);
  void prepare_network(const std::string& api);  // started by maybe_finish once the droplets are gone
  void verify(std::int64_t id);     // GET, then destroy only if it carries the run's tag
  void refuse(std::int64_t id, const std::string& why);
  void list();
  void on_listed(const DoResult& result);
  void destroy(std::int64_t id);
  void on_deleted(std::int64_t id, const DoResult& result);
  void confirm(std::int64_t id);
  void maybe_finish();
  void finish();
  bool has_unresolved_intents();
  void track(DoClient::OpId op);
  void stop_everything();
  void watch_reachability();

  uv_loop_t* loop_;
  DoClient& client_;
  Ledger& ledger_;
  std::string run_id_, tag_;
  CleanupOptions options_;
  std::function<void(const std::string&)> log_;
  std::function<void(CleanupReport)> done_;
  std::map<std::int64_t, Target> targets_;  // droplets being destroyed
  std::set<std::int64_t> gone_;
  std::map<std::int64_t, std::string> refused_;  // id -> why it is not touched
  std::vector<std::string> foreign_rows_;         // rows of another API or account
  bool listing_ = false, listed_once_ = false, finished_ = false;
  double give_up_at_ = 0;
  double last_answer_ = 0;  // when the API last answered (any HTTP status)
  std::string last_error_;
  DelayedCalls delayed_;
  std::vector<DoClient::OpId> ops_;  // calls made (cancelling a finished one is harmless)
  std::unique_ptr<KeyCleanup> keys_;  // the run's SSH keys, beside the droplets
  std::unique_ptr<NetworkCleanup> network_;  // the run's firewall and VPC, after the droplets
};

}  // namespace runara
