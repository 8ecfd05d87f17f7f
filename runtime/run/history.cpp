// SQLite-backed run history; see run/history.hpp for the contract.
#include "run/history.hpp"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include "base/files.hpp"

namespace runara {

namespace {

constexpr int kBusyTimeoutMs = 15000;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  run_id        TEXT PRIMARY KEY,
  script        TEXT NOT NULL,
  script_sha256 TEXT NOT NULL DEFAULT '',
  start_unix    REAL NOT NULL,
  end_unix      REAL NOT NULL,
  exit_code     INTEGER NOT NULL,
  status        TEXT NOT NULL,
  out_dir       TEXT NOT NULL,
  simulated     INTEGER NOT NULL,
  output_tokens_per_s REAL,
  ttft_p50_ms   REAL,
  cost_usd      REAL,
  pid           INTEGER NOT NULL DEFAULT 0,
  pid_start     INTEGER NOT NULL DEFAULT 0,
  boot_id       TEXT NOT NULL DEFAULT '',
  ran_where     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS runs_start ON runs (start_unix);
)sql";

// Columns that came after the first history.db: an older file gains them when opened. Their
// defaults describe its rows truthfully: no process recorded (they ended with a record).
struct AddedColumn {
  const char* name;
  const char* definition;
};
constexpr AddedColumn kAddedColumns[] = {
    {"pid", "INTEGER NOT NULL DEFAULT 0"},
    {"pid_start", "INTEGER NOT NULL DEFAULT 0"},
    {"boot_id", "TEXT NOT NULL DEFAULT ''"},
    {"ran_where", "TEXT NOT NULL DEFAULT ''"},  // rows of an older runara: where unknown
};

constexpr const char* kColumns =
    "run_id, script, script_sha256, start_unix, end_unix, exit_code, status, out_dir, simulated, "
    "output_tokens_per_s, ttft_p50_ms, cost_usd, pid, pid_start, boot_id, ran_where";

struct Statement {
  sqlite3_stmt* s = nullptr;
  ~Statement() { sqlite3_finalize(s); }
};

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool script_matches(const std::string& script, const std::string& name) {
  if (name.empty() || script == name) return true;
  const std::string file = base_name(script);
  if (file == name) return true;
  const std::size_t dot = file.rfind(".lua");
  return dot != std::string::npos && dot + 4 == file.size() && file.substr(0, dot) == name;
}

struct RunHistory::Impl {
  sqlite3* db = nullptr;
  std::string path;

  void check(int rc, const char* what) const {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
      throw HistoryError("run history " + path + ": " + what + ": " + sqlite3_errmsg(db));
  }
  std::set<std::string> columns() const;
  void migrate();
};

std::set<std::string> RunHistory::Impl::columns() const {
  Statement st;
  check(sqlite3_prepare_v2(db, "PRAGMA table_info(runs)", -1, &st.s, nullptr), "prepare");
  std::set<std::string> names;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    const auto* name = sqlite3_column_text(st.s, 1);
    if (name) names.insert(reinterpret_cast<const char*>(name));
  }
  check(rc, "table info");
  return names;
}

// Read first, outside any transaction, so that opening a current file takes no write lock. An
// older file is altered in one IMMEDIATE transaction: a second runara opening it at the same
// moment waits (the busy timeout), then finds the columns there and adds none twice.
void RunHistory::Impl::migrate() {
  auto missing = [this] {
    const std::set<std::string> have = columns();
    std::vector<const AddedColumn*> out;
    for (const auto& c : kAddedColumns) {
      if (!have.count(c.name)) out.push_back(&c);
    }
    return out;
  };
  if (missing().empty()) return;
  check(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), "migrate: begin");
  try {
    for (const AddedColumn* c : missing()) {
      const std::string sql = std::string("ALTER TABLE runs ADD COLUMN ") + c->name + " " + c->definition;
      check(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), "migrate: add column");
    }
    check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), "migrate: commit");
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

RunHistory::RunHistory(const std::string& state_dir) : impl_(std::make_unique<Impl>()) {
  if (state_dir.empty()) throw HistoryError("run history: no state folder");
  if (std::string error = make_dirs(state_dir, 0700); !error.empty()) throw HistoryError("run history: " + error);
  impl_->path = state_dir + "/history.db";
  const bool existed = ::access(impl_->path.c_str(), F_OK) == 0;
  if (sqlite3_open_v2(impl_->path.c_str(), &impl_->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string why = impl_->db ? sqlite3_errmsg(impl_->db) : "out of memory";
    sqlite3_close(impl_->db);
    impl_->db = nullptr;
    throw HistoryError("run history: cannot open " + impl_->path + ": " + why);
  }
  if (!existed) ::chmod(impl_->path.c_str(), 0600);  // paths of the user's runs: theirs only, as the ledger
  sqlite3_busy_timeout(impl_->db, kBusyTimeoutMs);
  try {
    impl_->check(sqlite3_exec(impl_->db, "PRAGMA journal_mode=WAL;", nullptr, nullptr, nullptr), "journal mode");
    impl_->check(sqlite3_exec(impl_->db, kSchema, nullptr, nullptr, nullptr), "schema");
    impl_->migrate();
  } catch (...) {
    sqlite3_close(impl_->db);
    impl_->db = nullptr;
    throw;
  }
}

RunHistory::~RunHistory() {
  if (impl_ && impl_->db) sqlite3_close(impl_->db);
}

const std::string& RunHistory::path() const { return impl_->path; }

namespace {

void bind_optional(sqlite3_stmt* s, int i, const std::optional<double>& v) {
  if (v) sqlite3_bind_double(s, i, *v);
  else sqlite3_bind_null(s, i);
}

std::optional<double> optional_column(sqlite3_stmt* s, int i) {
  if (sqlite3_column_type(s, i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(s, i);
}

std::string text_column(sqlite3_stmt* s, int i) {
  const auto* p = sqlite3_column_text(s, i);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(s, i))) : std::string();
}

HistoryEntry read_row(sqlite3_stmt* s) {
  HistoryEntry e;
  e.run_id = text_column(s, 0);
  e.script = text_column(s, 1);
  e.script_sha256 = text_column(s, 2);
  e.start_unix = sqlite3_column_double(s, 3);
  e.end_unix = sqlite3_column_double(s, 4);
  e.exit_code = sqlite3_column_int(s, 5);
  e.status = text_column(s, 6);
  e.out_dir = text_column(s, 7);
  e.simulated = sqlite3_column_int(s, 8) != 0;
  e.output_tokens_per_s = optional_column(s, 9);
  e.ttft_p50_ms = optional_column(s, 10);
  e.cost_usd = optional_column(s, 11);
  e.process.pid = sqlite3_column_int(s, 12);
  e.process.start_ticks = static_cast<std::uint64_t>(sqlite3_column_int64(s, 13));
  e.process.boot_id = text_column(s, 14);
  e.where = text_column(s, 15);
  return e;
}

}  // namespace

void RunHistory::record(const HistoryEntry& e) {
  Statement st;
  const std::string sql = std::string("INSERT OR REPLACE INTO runs (") + kColumns + ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
  impl_->check(sqlite3_prepare_v2(impl_->db, sql.c_str(), -1, &st.s, nullptr), "prepare");
  sqlite3_bind_text(st.s, 1, e.run_id.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 2, e.script.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 3, e.script_sha256.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(st.s, 4, e.start_unix);
  sqlite3_bind_double(st.s, 5, e.end_unix);
  sqlite3_bind_int(st.s, 6, e.exit_code);
  sqlite3_bind_text(st.s, 7, e.status.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 8, e.out_dir.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st.s, 9, e.simulated ? 1 : 0);
  bind_optional(st.s, 10, e.output_tokens_per_s);
  bind_optional(st.s, 11, e.ttft_p50_ms);
  bind_optional(st.s, 12, e.cost_usd);
  sqlite3_bind_int(st.s, 13, e.process.pid);
  sqlite3_bind_int64(st.s, 14, static_cast<sqlite3_int64>(e.process.start_ticks));
  sqlite3_bind_text(st.s, 15, e.process.boot_id.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 16, e.where.c_str(), -1, SQLITE_TRANSIENT);
  impl_->check(sqlite3_step(st.s), "insert");
}

void RunHistory::forget(const std::string& run_id) {
  Statement st;
  impl_->check(sqlite3_prepare_v2(impl_->db, "DELETE FROM runs WHERE run_id = ?", -1, &st.s, nullptr), "prepare");
  sqlite3_bind_text(st.s, 1, run_id.c_str(), -1, SQLITE_TRANSIENT);
  impl_->check(sqlite3_step(st.s), "delete");
}

std::vector<HistoryEntry> RunHistory::list(const HistoryQuery& q) {
  Statement st;
  const std::string sql = std::string("SELECT ") + kColumns + " FROM runs ORDER BY start_unix DESC, rowid DESC";
  impl_->check(sqlite3_prepare_v2(impl_->db, sql.c_str(), -1, &st.s, nullptr), "prepare");
  std::vector<HistoryEntry> out;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    HistoryEntry e = read_row(st.s);
    if (!script_matches(e.script, q.script)) continue;
    if (q.kind == HistoryQuery::Kind::real && e.simulated) continue;
    if (q.kind == HistoryQuery::Kind::simulated && !e.simulated) continue;
    out.push_back(std::move(e));
    if (q.limit > 0 && static_cast<int>(out.size()) >= q.limit) break;
  }
  impl_->check(rc, "select");
  return out;
}

std::optional<HistoryEntry> RunHistory::find(const std::string& id) {
  if (id.empty()) return std::nullopt;
  std::vector<HistoryEntry> found;
  for (auto& e : list({})) {
    if (e.run_id == id) return e;
    if (e.run_id.rfind(id, 0) == 0) found.push_back(std::move(e));
  }
  if (found.size() > 1) {
    std::string ids;
    for (const auto& e : found) ids += (ids.empty() ? "" : ", ") + e.run_id;
    throw HistoryError("run id '" + id + "' is ambiguous: it starts " + ids);
  }
  if (found.empty()) return std::nullopt;
  return found.front();
}

}  // namespace runara
