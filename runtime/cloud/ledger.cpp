// SQLite-backed ledger of cloud resources; see ledger.hpp for the contract.
#include "cloud/ledger.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

namespace runara {

namespace {

constexpr int kBusyTimeoutMs = 15000;
// 2: resources.account; 3: resources.host_key, ssh_keys; 4: cloud_resources (VPCs, firewalls).
// A table is added by CREATE TABLE IF NOT EXISTS alone; a column needs its ALTER below.
constexpr int kSchemaVersion = 4;

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// mkdir -p, new components with mode 0700.
void make_dirs(const std::string& dir) {
  if (dir.empty()) throw LedgerError("ledger: empty state directory");
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty() || partial == "/") continue;
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
      throw LedgerError("ledger: cannot create directory " + partial + ": " +
                        std::strerror(errno));
    }
  }
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw LedgerError("ledger: " + dir + " is not a directory");
}

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      throw LedgerError(std::string("ledger: ") + sqlite3_errmsg(db));
    }
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, const std::string& v) {
    check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Stmt& bind(int i, double v) {
    check(sqlite3_bind_double(stmt_, i, v));
    return *this;
  }
  Stmt& bind(int i, std::int64_t v) {
    check(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }

  // True while a row is available.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw LedgerError(std::string("ledger: ") + sqlite3_errmsg(db_));
  }
  void run() {
    while (step()) {
    }
  }
  int changes() const { return sqlite3_changes(db_); }

  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) throw LedgerError(std::string("ledger: ") + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    throw LedgerError("ledger: " + msg);
  }
}

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS resources (
  name         TEXT PRIMARY KEY,
  run_id       TEXT NOT NULL,
  tag          TEXT NOT NULL,
  api_base     TEXT NOT NULL,
  account      TEXT NOT NULL DEFAULT '',
  created_at   REAL NOT NULL,
  droplet_id   INTEGER,
  state        TEXT NOT NULL CHECK (state IN
                 ('intent', 'created', 'destroying', 'destroyed', 'create_failed')),
  price_hourly REAL NOT NULL DEFAULT 0,
  size         TEXT NOT NULL DEFAULT '',
  region       TEXT NOT NULL DEFAULT '',
  updated_at   REAL NOT NULL,
  host_key     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS resources_run ON resources (run_id, state);
CREATE INDEX IF NOT EXISTS resources_droplet ON resources (api_base, droplet_id);
CREATE TABLE IF NOT EXISTS runs (
  run_id     TEXT PRIMARY KEY,
  pid        INTEGER NOT NULL,
  started_at REAL NOT NULL,
  script     TEXT NOT NULL,
  status     TEXT NOT NULL CHECK (status IN ('running', 'finished', 'crashed')),
  deadline   REAL NOT NULL DEFAULT 0,
  ended_at   REAL
);
CREATE TABLE IF NOT EXISTS ssh_keys (
  name         TEXT PRIMARY KEY,
  run_id       TEXT NOT NULL,
  fingerprint  TEXT NOT NULL,
  api_base     TEXT NOT NULL,
  account      TEXT NOT NULL DEFAULT '',
  private_key  TEXT NOT NULL DEFAULT '',
  key_id       INTEGER,
  state        TEXT NOT NULL CHECK (state IN
                 ('intent', 'created', 'destroying', 'destroyed', 'create_failed')),
  created_at   REAL NOT NULL,
  updated_at   REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS ssh_keys_run ON ssh_keys (run_id, state);
CREATE TABLE IF NOT EXISTS cloud_resources (
  kind         TEXT NOT NULL,
  name         TEXT NOT NULL,
  run_id       TEXT NOT NULL,
  api_base     TEXT NOT NULL,
  account      TEXT NOT NULL DEFAULT '',
  region       TEXT NOT NULL DEFAULT '',
  remote_id    TEXT,
  state        TEXT NOT NULL CHECK (state IN
                 ('intent', 'created', 'destroying', 'destroyed', 'create_failed')),
  created_at   REAL NOT NULL,
  updated_at   REAL NOT NULL,
  PRIMARY KEY (kind, name)
);
CREATE INDEX IF NOT EXISTS cloud_resources_run ON cloud_resources (run_id, state);
)sql";

constexpr const char* kEntryColumns =
    "run_id, name, tag, api_base, created_at, droplet_id, state, price_hourly, size, region, "
    "updated_at, account, host_key";

LedgerEntry read_entry(const Stmt& s) {
  LedgerEntry e;
  e.run_id = s.text(0);
  e.name = s.text(1);
  e.tag = s.text(2);
  e.api_base = s.text(3);
  e.created_at = s.real(4);
  if (!s.null(5)) e.droplet_id = s.int64(5);
  e.state = parse_resource_state(s.text(6)).value_or(ResourceState::intent);
  e.price_hourly = s.real(7);
  e.size = s.text(8);
  e.region = s.text(9);
  e.updated_at = s.real(10);
  e.account = s.text(11);
  e.host_key = s.text(12);
  return e;
}

}  // namespace

std::string normalized_api_base(std::string api_base) {
  while (!api_base.empty() && api_base.back() == '/') api_base.pop_back();
  return api_base;
}

const char* to_string(ResourceState state) {
  switch (state) {
    case ResourceState::intent: return "intent";
    case ResourceState::created: return "created";
    case ResourceState::destroying: return "destroying";
    case ResourceState::destroyed: return "destroyed";
    case ResourceState::create_failed: return "create_failed";
  }
  return "intent";
}

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::running: return "running";
    case RunStatus::finished: return "finished";
    case RunStatus::crashed: return "crashed";
  }
  return "running";
}

std::optional<ResourceState> parse_resource_state(std::string_view text) {
  for (auto s : {ResourceState::intent, ResourceState::created, ResourceState::destroying,
                 ResourceState::destroyed, ResourceState::create_failed})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

std::optional<RunStatus> parse_run_status(std::string_view text) {
  for (auto s : {RunStatus::running, RunStatus::finished, RunStatus::crashed})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

struct Ledger::Impl {
  std::string path;
  sqlite3* db = nullptr;

  ~Impl() {
    if (db) sqlite3_close_v2(db);
  }

  std::vector<LedgerEntry> entries(Stmt& s) {
    std::vector<LedgerEntry> out;
    while (s.step()) out.push_back(read_entry(s));
    return out;
  }
};

Ledger::Ledger(const std::string& state_dir) : impl_(std::make_unique<Impl>()) {
  make_dirs(state_dir);
  impl_->path = state_dir + (state_dir.back() == '/' ? "" : "/") + "ledger.db";

  // Create the file ourselves so it is private (SQLite would use 0644 minus the umask); the
  // -wal and -shm files SQLite creates copy this file's permissions.
  const int fd = ::open(impl_->path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw LedgerError("ledger: cannot open " + impl_->path + ": " + std::strerror(errno));
  }
  ::close(fd);

  if (sqlite3_open_v2(impl_->path.c_str(), &impl_->db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    std::string msg = impl_->db ? sqlite3_errmsg(impl_->db) : "out of memory";
    throw LedgerError("ledger: cannot open " + impl_->path + ": " + msg);
  }
  sqlite3* db = impl_->db;
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);

  // Switching to WAL needs a moment of exclusive access; when another process is opening the
  // same new file at once, retry a little instead of failing.
  for (int attempt = 0;; ++attempt) {
    try {
      Stmt s(db, "PRAGMA journal_mode=WAL");
      std::string mode = s.step() ? s.text(0) : "";
      if (mode != "wal") throw LedgerError("ledger: cannot enable WAL (mode " + mode + ")");
      break;
    } catch (const LedgerError&) {
      if (attempt >= 50) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  exec(db, "PRAGMA synchronous=FULL");

  exec(db, "BEGIN IMMEDIATE");
  try {
    std::int64_t version = 0;
    {
      Stmt v(db, "PRAGMA user_version");
      version = v.step() ? v.int64(0) : 0;
    }
    exec(db, kSchema);
    // A version-1 file has resources without the account column (a new file got it above).
    if (version == 1) exec(db, "ALTER TABLE resources ADD COLUMN account TEXT NOT NULL DEFAULT ''");
    if (version == 1 || version == 2) exec(db, "ALTER TABLE resources ADD COLUMN host_key TEXT NOT NULL DEFAULT ''");
    if (version > kSchemaVersion) {
      throw LedgerError("ledger: " + impl_->path + " has schema version " +
                        std::to_string(version) + ", newer than this runara understands");
    }
    if (version < kSchemaVersion) {
      exec(db, ("PRAGMA user_version=" + std::to_string(kSchemaVersion)).c_str());
    }
    exec(db, "COMMIT");
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

Ledger::~Ledger() = default;

const std::string& Ledger::path() const { return impl_->path; }

void Ledger::record_intent(const LedgerIntent& in) {
  const double now = now_s();
  Stmt s(impl_->db,
         "INSERT INTO resources (run_id, name, tag, api_base, created_at, droplet_id, state, "
         "price_hourly, size, region, updated_at, account) "
         "VALUES (?1, ?2, ?3, ?4, ?5, NULL, 'intent', ?6, ?7, ?8, ?5, ?9)");
  s.bind(1, in.run_id)
      .bind(2, in.name)
      .bind(3, in.tag)
      .bind(4, normalized_api_base(in.api_base))
      .bind(5, now)
      .bind(6, in.price_hourly)
      .bind(7, in.size)
      .bind(8, in.region)
      .bind(9, in.account);
  s.run();
}

bool Ledger::record_id(const std::string& name, std::int64_t droplet_id) {
  Stmt s(impl_->db,
         "UPDATE resources SET droplet_id = ?2, updated_at = ?3, state = CASE WHEN state IN "
         "('intent', 'create_failed') THEN 'created' ELSE state END WHERE name = ?1");
  s.bind(1, name).bind(2, droplet_id).bind(3, now_s());
  s.run();
  return s.changes() > 0;
}

bool Ledger::mark_destroying(const std::string& api_base, std::int64_t droplet_id) {
  Stmt s(impl_->db,
         "UPDATE resources SET state = 'destroying', updated_at = ?3 "
         "WHERE api_base = ?1 AND droplet_id = ?2 AND state <> 'destroyed'");
  s.bind(1, normalized_api_base(api_base)).bind(2, droplet_id).bind(3, now_s());
  s.run();
  return s.changes() > 0;
}

bool Ledger::mark_destroyed(const std::string& api_base, std::int64_t droplet_id) {
  Stmt s(impl_->db,
         "UPDATE resources SET state = 'destroyed', updated_at = ?3 "
         "WHERE api_base = ?1 AND droplet_id = ?2");
  s.bind(1, normalized_api_base(api_base)).bind(2, droplet_id).bind(3, now_s());
  s.run();
  return s.changes() > 0;
}

bool Ledger::mark_create_failed(const std::string& name) {
  Stmt s(impl_->db,
         "UPDATE resources SET state = 'create_failed', updated_at = ?2 "
         "WHERE name = ?1 AND state = 'intent' AND droplet_id IS NULL");
  s.bind(1, name).bind(2, now_s());
  s.run();
  return s.changes() > 0;
}

std::optional<LedgerEntry> Ledger::find(const std::string& name) {
  Stmt s(impl_->db,
         (std::string("SELECT ") + kEntryColumns + " FROM resources WHERE name = ?1").c_str());
  s.bind(1, name);
  if (!s.step()) return std::nullopt;
  return read_entry(s);
}

std::vector<LedgerEntry> Ledger::pending(const std::string& run_id) {
  Stmt s(impl_->db, (std::string("SELECT ") + kEntryColumns +
                     " FROM resources WHERE run_id = ?1 AND state NOT IN "
                     "('destroyed', 'create_failed') ORDER BY created_at, rowid")
                        .c_str());
  s.bind(1, run_id);
  return impl_->entries(s);
}

std::vector<LedgerEntry> Ledger::pending_all() {
  Stmt s(impl_->db, (std::string("SELECT ") + kEntryColumns +
                     " FROM resources WHERE state NOT IN ('destroyed', 'create_failed') "
                     "ORDER BY created_at, rowid")
                        .c_str());
  return impl_->entries(s);
}

std::vector<LedgerEntry> Ledger::pending_at(const std::string& api_base) {
  Stmt s(impl_->db, (std::string("SELECT ") + kEntryColumns +
                     " FROM resources WHERE api_base = ?1 AND state NOT IN ('destroyed', 'create_failed') "
                     "ORDER BY created_at, rowid")
                        .c_str());
  s.bind(1, normalized_api_base(api_base));
  return impl_->entries(s);
}

void Ledger::begin_run(const RunRecord& run) {
  Stmt s(impl_->db,
         "INSERT INTO runs (run_id, pid, started_at, script, status, deadline, ended_at) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL)");
  s.bind(1, run.run_id)
      .bind(2, run.pid)
      .bind(3, run.started_at > 0 ? run.started_at : now_s())
      .bind(4, run.script)
      .bind(5, std::string(to_string(run.status)))
      .bind(6, run.deadline);
  s.run();
}

bool Ledger::finish_run(const std::string& run_id, RunStatus status) {
  Stmt s(impl_->db, "UPDATE runs SET status = ?2, ended_at = ?3 WHERE run_id = ?1");
  s.bind(1, run_id).bind(2, std::string(to_string(status))).bind(3, now_s());
  s.run();
  return s.changes() > 0;
}

std::vector<RunRecord> Ledger::runs() {
  Stmt s(impl_->db,
         "SELECT run_id, pid, started_at, script, status, deadline, ended_at FROM runs "
         "ORDER BY started_at, rowid");
  std::vector<RunRecord> out;
  while (s.step()) {
    RunRecord r;
    r.run_id = s.text(0);
    r.pid = s.int64(1);
    r.started_at = s.real(2);
    r.script = s.text(3);
    r.status = parse_run_status(s.text(4)).value_or(RunStatus::running);
    r.deadline = s.real(5);
    if (!s.null(6)) r.ended_at = s.real(6);
    out.push_back(std::move(r));
  }
  return out;
}

// --- the run's SSH keys ---

namespace {

constexpr const char* kKeyColumns =
    "run_id, name, fingerprint, api_base, account, private_key, key_id, state, created_at, updated_at";

LedgerKey read_key(const Stmt& s) {
  LedgerKey k;
  k.run_id = s.text(0);
  k.name = s.text(1);
  k.fingerprint = s.text(2);
  k.api_base = s.text(3);
  k.account = s.text(4);
  k.private_key_path = s.text(5);
  if (!s.null(6)) k.key_id = s.int64(6);
  k.state = parse_resource_state(s.text(7)).value_or(ResourceState::intent);
  k.created_at = s.real(8);
  k.updated_at = s.real(9);
  return k;
}

std::vector<LedgerKey> read_keys(Stmt& s) {
  std::vector<LedgerKey> out;
  while (s.step()) out.push_back(read_key(s));
  return out;
}

}  // namespace

void Ledger::record_key_intent(const LedgerKey& key) {
  const double now = now_s();
  Stmt s(impl_->db,
         "INSERT INTO ssh_keys (run_id, name, fingerprint, api_base, account, private_key, key_id, state, "
         "created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, 'intent', ?7, ?7)");
  s.bind(1, key.run_id)
      .bind(2, key.name)
      .bind(3, key.fingerprint)
      .bind(4, normalized_api_base(key.api_base))
      .bind(5, key.account)
      .bind(6, key.private_key_path)
      .bind(7, now);
  s.run();
}

bool Ledger::record_key_id(const std::string& name, std::int64_t key_id) {
  Stmt s(impl_->db,
         "UPDATE ssh_keys SET key_id = ?2, updated_at = ?3, state = CASE WHEN state IN "
         "('intent', 'create_failed') THEN 'created' ELSE state END WHERE name = ?1");
  s.bind(1, name).bind(2, key_id).bind(3, now_s());
  s.run();
  return s.changes() > 0;
}

bool Ledger::mark_key(const std::string& name, ResourceState state) {
  Stmt s(impl_->db, "UPDATE ssh_keys SET state = ?2, updated_at = ?3 WHERE name = ?1");
  s.bind(1, name).bind(2, std::string(to_string(state))).bind(3, now_s());
  s.run();
  return s.changes() > 0;
}

std::vector<LedgerKey> Ledger::pending_keys(const std::string& run_id) {
  Stmt s(impl_->db, (std::string("SELECT ") + kKeyColumns +
                     " FROM ssh_keys WHERE run_id = ?1 AND state NOT IN ('destroyed', 'create_failed') "
                     "ORDER BY created_at, rowid")
                        .c_str());
  s.bind(1, run_id);
  return read_keys(s);
}

std::vector<LedgerKey> Ledger::pending_keys_all() {
  Stmt s(impl_->db, (std::string("SELECT ") + kKeyColumns +
                     " FROM ssh_keys WHERE state NOT IN ('destroyed', 'create_failed') ORDER BY created_at, rowid")
                        .c_str());
  return read_keys(s);
}

// --- generic cloud resources ---

namespace {

constexpr const char* kResourceColumns =
    "kind, name, run_id, api_base, account, region, remote_id, state, created_at, updated_at";

std::vector<LedgerResource> read_resources(Stmt& s) {
  std::vector<LedgerResource> out;
  while (s.step()) {
    LedgerResource r;
    r.kind = s.text(0);
    r.name = s.text(1);
    r.run_id = s.text(2);
    r.api_base = s.text(3);
    r.account = s.text(4);
    r.region = s.text(5);
    if (!s.null(6)) r.remote_id = s.text(6);
    r.state = parse_resource_state(s.text(7)).value_or(ResourceState::intent);
    r.created_at = s.real(8);
    r.updated_at = s.real(9);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

void Ledger::record_resource_intent(const LedgerResource& r) {
  Stmt s(impl_->db,
         "INSERT INTO cloud_resources (kind, name, run_id, api_base, account, region, remote_id, state, created_at, "
         "updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, 'intent', ?7, ?7)");
  s.bind(1, r.kind).bind(2, r.name).bind(3, r.run_id).bind(4, normalized_api_base(r.api_base));
  s.bind(5, r.account).bind(6, r.region).bind(7, now_s());
  s.run();
}

bool Ledger::record_resource_id(const std::string& kind, const std::string& name, const std::string& remote_id) {
  Stmt s(impl_->db,
         "UPDATE cloud_resources SET remote_id = ?3, updated_at = ?4, state = CASE WHEN state IN "
         "('intent', 'create_failed') THEN 'created' ELSE state END WHERE kind = ?1 AND name = ?2");
  s.bind(1, kind).bind(2, name).bind(3, remote_id).bind(4, now_s());
  s.run();
  return s.changes() > 0;
}

bool Ledger::mark_resource(const std::string& kind, const std::string& name, ResourceState state) {
  Stmt s(impl_->db, "UPDATE cloud_resources SET state = ?3, updated_at = ?4 WHERE kind = ?1 AND name = ?2");
  s.bind(1, kind).bind(2, name).bind(3, std::string(to_string(state))).bind(4, now_s());
  s.run();
  return s.changes() > 0;
}

std::optional<LedgerResource> Ledger::find_resource(const std::string& kind, const std::string& name) {
  Stmt s(impl_->db, (std::string("SELECT ") + kResourceColumns + " FROM cloud_resources WHERE kind = ?1 AND name = ?2").c_str());
  s.bind(1, kind).bind(2, name);
  auto rows = read_resources(s);
  if (rows.empty()) return std::nullopt;
  return rows.front();
}

std::vector<LedgerResource> Ledger::pending_resources(const std::string& run_id) {
  Stmt s(impl_->db, (std::string("SELECT ") + kResourceColumns +
                     " FROM cloud_resources WHERE run_id = ?1 AND state NOT IN ('destroyed', 'create_failed') "
                     "ORDER BY created_at, rowid")
                        .c_str());
  s.bind(1, run_id);
  return read_resources(s);
}

std::vector<LedgerResource> Ledger::pending_resources_all() {
  Stmt s(impl_->db, (std::string("SELECT ") + kResourceColumns +
                     " FROM cloud_resources WHERE state NOT IN ('destroyed', 'create_failed') ORDER BY created_at, rowid")
                        .c_str());
  return read_resources(s);
}

bool Ledger::pin_host_key(const std::string& droplet_name, const std::string& fingerprint) {
  Stmt s(impl_->db, "UPDATE resources SET host_key = ?2, updated_at = ?3 WHERE name = ?1 AND host_key = ''");
  s.bind(1, droplet_name).bind(2, fingerprint).bind(3, now_s());
  s.run();
  return s.changes() > 0;
}

}  // namespace runara
