// The local run history: one row per run of the `runara` command, so that `runara runs` can list
// past runs with their headline figures and `runara compare` can name runs by id or as "the last
// two of this script". A run's row is written as it starts, status "running", with the process
// that runs it (pid, start time and boot: base/process_identity.hpp), and completed as it ends:
// the same row rewritten. A row still "running" whose process is gone is a run that ended
// without a record (SIGKILL, a crash, the machine lost): readers tell it with as_seen_now
// (run/history_entry.hpp). Rows hold what the run record holds of a run, minus its args and
// params (never stored: they may carry secrets), plus the process.
//
// One SQLite file, history.db, in the same state folder as the ledger ($RUNARA_STATE_DIR, default
// ~/.local/state/runara), WAL mode and a busy timeout as the ledger has, so that several runara
// processes may write it. Each call is one short statement; nothing is held open between calls.
// Unlike the ledger it records nothing that bills: losing it loses a listing, never money, so a
// failure to write it is a warning in run.log, never a failed run.
//
// A history.db of an older runara (before the process or where columns) is migrated when opened: the
// columns are added (ALTER TABLE, once, in a write transaction that a second process opening it
// at the same moment waits for), its rows keep their defaults (no process: they had ended).
//
// Contract. A RunHistory is one connection: one thread at a time, never across fork(). Calls are
// synchronous (a local file, one tiny transaction). Failures throw HistoryError. Nothing here
// logs, redacts or reads results.json: the caller builds the entry (run/history_entry.hpp).
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/process_identity.hpp"

namespace runara {

class HistoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct HistoryEntry {
  std::string run_id;
  std::string script;         // the script path as given, or what ran instead ("runara bench")
  std::string script_sha256;  // "" when there was no script file
  double start_unix = 0, end_unix = 0;  // end_unix 0: not ended (yet)
  int exit_code = 0;
  // "running" while the run lasts, then the run record's: ok, failed, stopped, watchdog,
  // thresholds. Readers show a "running" row whose process is gone as kKilled.
  std::string status;
  std::string out_dir;  // absolute; "" when the run left no folder (or has made none yet)
  bool simulated = false;
  // Where it ran, in words for `runara runs`: "droplet" (or "droplets (N)"), "your machine
  // USER@HOST", "endpoint URL", "simulated", "this computer" (it created and named no machine);
  // "" while a run without --on has not ended (its droplets are not known yet) and in rows of an
  // older runara.
  std::string where;
  ProcessIdentity process;  // the process that ran it; pid 0 in rows of an older runara
  // Headline figures, absent when the run measured none (run/history_entry.hpp says which).
  std::optional<double> output_tokens_per_s, ttft_p50_ms, cost_usd;
};

inline constexpr const char* kRunning = "running";
inline constexpr const char* kKilled = "killed";  // ended without a record: never stored, only shown

struct HistoryQuery {
  std::string script;  // "": any; else the path as given, its file name, or the name without .lua
  int limit = 0;       // 0: no limit
  enum class Kind { any, real, simulated } kind = Kind::any;
};

class RunHistory {
 public:
  // Opens (creating if needed) state_dir/history.db; a missing folder is created 0700.
  explicit RunHistory(const std::string& state_dir);
  ~RunHistory();
  RunHistory(const RunHistory&) = delete;
  RunHistory& operator=(const RunHistory&) = delete;

  const std::string& path() const;
  void record(const HistoryEntry& entry);  // a run id seen before is replaced
  void forget(const std::string& run_id);   // a run that ended leaving nothing to list
  std::vector<HistoryEntry> list(const HistoryQuery& query);  // newest first
  // The run whose id is `id` or starts with it; nullopt when none. Throws when a prefix is ambiguous.
  std::optional<HistoryEntry> find(const std::string& id);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether `script` (as recorded) is the script `name` names: the same path, file name, or stem.
bool script_matches(const std::string& script, const std::string& name);

}  // namespace runara
