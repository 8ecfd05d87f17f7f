// state_dir/history.db as the first runara with a history wrote it, and the columns a
// history.db has: for the migration tests, in-process (tests/unit/test_run_history.cpp) and with
// several runara processes at once (tests/end_to_end/test_run_history_processes.cpp).
// Header-only; the test fails (REQUIRE) when the database cannot be written.
#pragma once

#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <string>

namespace runara::test {

// state_dir/history.db as the first runara with a history wrote it (no process columns), with
// one finished run in it.
inline void write_earlier_format(const std::string& state_dir) {
  std::filesystem::create_directories(state_dir);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((state_dir + "/history.db").c_str(), &db) == SQLITE_OK);
  const char* sql = R"sql(
    PRAGMA journal_mode=WAL;
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
      cost_usd      REAL
    );
    CREATE INDEX IF NOT EXISTS runs_start ON runs (start_unix);
    INSERT INTO runs VALUES ('0ld0ld00', 'old.lua', 'feed', 100, 110, 0, 'ok', '/results/old', 0, 42, 7, NULL);
  )sql";
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &error);
  INFO((error ? error : ""));
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

inline std::set<std::string> run_columns(const std::string& state_dir) {
  sqlite3* db = nullptr;
  sqlite3_open_v2((state_dir + "/history.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  std::set<std::string> names;
  if (sqlite3_prepare_v2(db, "PRAGMA table_info(runs)", -1, &st, nullptr) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) names.insert(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return names;
}

}  // namespace runara::test
