// The durable ledger of cloud resources: what runara asked a cloud to create and how far their
// destruction has got, so that a crash, a kill or a second process can always find (and
// destroy) whatever might still be billing.
//
// One SQLite file, $RUNARA_STATE_DIR/ledger.db (the caller passes the directory), in WAL mode
// with synchronous=FULL (every committed change is fsynced before the call returns) and a busy
// timeout, so several runara processes can share it. Every call is one short transaction and no
// transaction is ever held open between calls, so nothing stays locked across network waits.
//
// The calls are synchronous: the file is local and each transaction tiny (an fsync at most), so
// they are made directly from the event loop rather than from a worker thread.
//
// Rows are keyed by API endpoint and account: a resource is only ever looked at through the
// API (and token's account) it was created with, so runs against a fake or another endpoint
// never touch the real account's rows, nor the other way round.
//
// A Ledger is one connection; use it from one thread at a time and never across fork().
// Failures throw LedgerError.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace runara {

class LedgerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// intent: about to be created (no id yet) -> created (id known) -> destroying (DELETE
// accepted) -> destroyed (GET answered 404). create_failed: the create certainly did not
// produce a droplet (a definite error, or reconciliation by tag found none).
enum class ResourceState { intent, created, destroying, destroyed, create_failed };
enum class RunStatus { running, finished, crashed };

const char* to_string(ResourceState state);
const char* to_string(RunStatus status);
std::optional<ResourceState> parse_resource_state(std::string_view text);
std::optional<RunStatus> parse_run_status(std::string_view text);

struct LedgerIntent {
  std::string run_id;
  std::string name;      // droplet name, unique in the ledger
  std::string tag;       // the run's tag, e.g. "runara:run-<id>"
  std::string api_base;  // the API the droplet is created through (normalized_api_base)
  std::string account;   // uuid of the account behind the token (GET /v2/account)
  double price_hourly = 0;
  std::string size;
  std::string region;
};

struct LedgerEntry {
  std::string run_id, name, tag, api_base;
  std::string account;    // "" for rows written before accounts were recorded
  double created_at = 0;  // unix seconds when the intent was recorded
  std::optional<std::int64_t> droplet_id;
  ResourceState state = ResourceState::intent;
  double price_hourly = 0;
  std::string size, region;
  double updated_at = 0;  // unix seconds of the last change
  std::string host_key;   // SSH host key fingerprint pinned on first login ("" none yet)
};

// The run's own SSH key registered with the account (POST /v2/account/keys). Same lifecycle
// words as droplets: intent (written before the POST) -> created (id known) -> destroyed
// (DELETE answered, or GET by fingerprint answered 404) or create_failed.
struct LedgerKey {
  std::string run_id;
  std::string name;         // "runara-<run id>", the key's name at the API
  std::string fingerprint;  // MD5 colon hex, as the API names keys; known before the POST
  std::string api_base, account;
  std::string private_key_path;  // 0600 file in the state folder; removed once the key is gone
  std::optional<std::int64_t> key_id;
  ResourceState state = ResourceState::intent;
  double created_at = 0, updated_at = 0;
};

// A cloud resource of a kind in resource_kinds.hpp (a VPC, a firewall): same lifecycle words as
// droplets. Its id at the API is text (VPC and firewall ids are UUIDs). Only resources the run
// created are recorded: a VPC the script names as `existing` never is, so it is never deleted.
struct LedgerResource {
  std::string kind;  // "vpc", "firewall" (resource_kinds.hpp)
  std::string name;  // unique per kind: "runara-<run id>-vpc"
  std::string run_id, api_base, account;
  std::string region;  // "" for kinds without one
  std::optional<std::string> remote_id;
  ResourceState state = ResourceState::intent;
  double created_at = 0, updated_at = 0;
};

struct RunRecord {
  std::string run_id;
  std::int64_t pid = 0;
  double started_at = 0;  // unix seconds
  std::string script;
  RunStatus status = RunStatus::running;
  double deadline = 0;  // unix seconds by which the run must be over (0: none)
  std::optional<double> ended_at;
};

// The form of an API base URL the ledger stores and compares: no trailing slashes.
std::string normalized_api_base(std::string api_base);

class Ledger {
 public:
  // Opens (creating if needed) state_dir/ledger.db; missing directories are created 0700 and
  // a new database file 0600.
  explicit Ledger(const std::string& state_dir);
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  const std::string& path() const;

  // Durably records that a droplet is about to be created; call (and let it return) BEFORE the
  // create request is sent. Throws LedgerError if the name is already in the ledger.
  void record_intent(const LedgerIntent& intent);
  // The create answered with an id: intent/create_failed -> created. False: unknown name.
  bool record_id(const std::string& name, std::int64_t droplet_id);
  // DELETE was accepted for (api_base, id): -> destroying (unless already destroyed).
  bool mark_destroying(const std::string& api_base, std::int64_t droplet_id);
  // Only once GET for the droplet answered 404: -> destroyed.
  bool mark_destroyed(const std::string& api_base, std::int64_t droplet_id);
  // The create certainly produced nothing: intent -> create_failed (rows with an id are kept).
  bool mark_create_failed(const std::string& name);

  std::optional<LedgerEntry> find(const std::string& name);
  // Everything of a run (or of all runs) that is not destroyed or create_failed, oldest first.
  std::vector<LedgerEntry> pending(const std::string& run_id);
  std::vector<LedgerEntry> pending_all();
  // pending_all() of one API only: what `runara ls`/`reap` talking to api_base may act on.
  std::vector<LedgerEntry> pending_at(const std::string& api_base);

  // Records a run as running (started_at/status of `run` are used as given; started_at 0 means
  // now). Throws LedgerError if the run id exists.
  void begin_run(const RunRecord& run);

  // --- the run's SSH keys ---
  // Durably records a key about to be registered; call BEFORE the POST. Throws on a duplicate name.
  void record_key_intent(const LedgerKey& key);
  bool record_key_id(const std::string& name, std::int64_t key_id);
  bool mark_key(const std::string& name, ResourceState state);  // destroyed or create_failed
  std::vector<LedgerKey> pending_keys(const std::string& run_id);  // not destroyed/create_failed
  std::vector<LedgerKey> pending_keys_all();
  // --- generic cloud resources (VPCs, firewalls; resource_kinds.hpp) ---
  // Durably records a resource about to be created; call BEFORE the POST. Throws on a duplicate
  // (kind, name).
  void record_resource_intent(const LedgerResource& resource);
  // The create answered (or a listing showed it): intent/create_failed -> created with its id.
  bool record_resource_id(const std::string& kind, const std::string& name, const std::string& remote_id);
  bool mark_resource(const std::string& kind, const std::string& name, ResourceState state);
  std::optional<LedgerResource> find_resource(const std::string& kind, const std::string& name);
  std::vector<LedgerResource> pending_resources(const std::string& run_id);  // not destroyed/create_failed
  std::vector<LedgerResource> pending_resources_all();
  // Trust on first use: the droplet's host key fingerprint (only written while none is).
  bool pin_host_key(const std::string& droplet_name, const std::string& fingerprint);
  // running -> finished or crashed, with ended_at = now. False: unknown run id.
  bool finish_run(const std::string& run_id, RunStatus status);
  std::vector<RunRecord> runs();  // oldest first

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace runara
