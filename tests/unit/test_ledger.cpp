// The SQLite ledger: lifecycle, filtering, durability across reopen, two writers at once.
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cloud/ledger.hpp"

using runara::Ledger;
using runara::LedgerEntry;
using runara::LedgerError;
using runara::LedgerIntent;
using runara::ResourceState;
using runara::RunRecord;
using runara::RunStatus;

namespace {

// A fresh directory under /tmp, removed with everything in it at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/runara-ledger-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

LedgerIntent intent(const std::string& run, const std::string& name) {
  LedgerIntent in;
  in.run_id = run;
  in.name = name;
  in.tag = "runara:run-" + run;
  in.api_base = "https://api.digitalocean.com";
  in.price_hourly = 3.39;
  in.size = "gpu-h100x1-80gb";
  in.region = "nyc2";
  return in;
}

std::vector<std::string> names(const std::vector<LedgerEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.name);
  return out;
}

}  // namespace

TEST_CASE("Ledger records a droplet's lifecycle", "[ledger]") {
  TempDir dir;
  Ledger ledger(dir.path + "/state");
  CHECK(ledger.path() == dir.path + "/state/ledger.db");

  ledger.record_intent(intent("r1", "runara-r1-a"));
  auto e = ledger.find("runara-r1-a");
  REQUIRE(e);
  CHECK(e->state == ResourceState::intent);
  CHECK_FALSE(e->droplet_id);
  CHECK(e->run_id == "r1");
  CHECK(e->tag == "runara:run-r1");
  CHECK(e->api_base == "https://api.digitalocean.com");
  CHECK(e->price_hourly == Approx(3.39));
  CHECK(e->size == "gpu-h100x1-80gb");
  CHECK(e->region == "nyc2");
  CHECK(e->created_at > 1.6e9);
  CHECK(e->updated_at >= e->created_at);

  CHECK_THROWS_AS(ledger.record_intent(intent("r1", "runara-r1-a")), LedgerError);  // unique

  CHECK(ledger.record_id("runara-r1-a", 4242));
  CHECK_FALSE(ledger.record_id("no-such-droplet", 1));
  e = ledger.find("runara-r1-a");
  CHECK(e->state == ResourceState::created);
  CHECK(e->droplet_id == 4242);
  CHECK_FALSE(ledger.mark_create_failed("runara-r1-a"));  // it has an id: never downgraded

  CHECK_FALSE(ledger.mark_destroying("http://127.0.0.1:9", 4242));  // another API's 4242
  CHECK(ledger.mark_destroying("https://api.digitalocean.com", 4242));
  CHECK(ledger.find("runara-r1-a")->state == ResourceState::destroying);
  CHECK(ledger.pending("r1").size() == 1);
  CHECK(ledger.mark_destroyed("https://api.digitalocean.com", 4242));
  CHECK(ledger.find("runara-r1-a")->state == ResourceState::destroyed);
  CHECK_FALSE(ledger.mark_destroying("https://api.digitalocean.com", 4242));  // stays destroyed
  CHECK(ledger.pending("r1").empty());

  ledger.record_intent(intent("r1", "runara-r1-b"));
  CHECK(ledger.mark_create_failed("runara-r1-b"));
  CHECK(ledger.find("runara-r1-b")->state == ResourceState::create_failed);
  // Reconciliation found it after all: the id revives it.
  CHECK(ledger.record_id("runara-r1-b", 77));
  CHECK(ledger.find("runara-r1-b")->state == ResourceState::created);
  CHECK_FALSE(ledger.find("nothing"));
}

TEST_CASE("Ledger pending() filters by run and state", "[ledger]") {
  TempDir dir;
  Ledger ledger(dir.path);
  ledger.record_intent(intent("r1", "a-intent"));
  ledger.record_intent(intent("r1", "b-created"));
  ledger.record_intent(intent("r1", "c-destroying"));
  ledger.record_intent(intent("r1", "d-destroyed"));
  ledger.record_intent(intent("r1", "e-failed"));
  ledger.record_intent(intent("r2", "f-other-run"));
  ledger.record_id("b-created", 2);
  ledger.record_id("c-destroying", 3);
  ledger.record_id("d-destroyed", 4);
  ledger.record_id("f-other-run", 6);
  ledger.mark_destroying("https://api.digitalocean.com", 3);
  ledger.mark_destroying("https://api.digitalocean.com", 4);
  ledger.mark_destroyed("https://api.digitalocean.com", 4);
  ledger.mark_create_failed("e-failed");

  CHECK(names(ledger.pending("r1")) ==
        std::vector<std::string>{"a-intent", "b-created", "c-destroying"});
  CHECK(names(ledger.pending("r2")) == std::vector<std::string>{"f-other-run"});
  CHECK(ledger.pending("r3").empty());
  CHECK(names(ledger.pending_all()) ==
        std::vector<std::string>{"a-intent", "b-created", "c-destroying", "f-other-run"});
}

TEST_CASE("Ledger survives reopening, private and in WAL mode", "[ledger]") {
  TempDir dir;
  const std::string state = dir.path + "/nested/state";
  {
    Ledger ledger(state);
    ledger.record_intent(intent("r1", "kept"));
    ledger.record_id("kept", 99);
    RunRecord run;
    run.run_id = "r1";
    run.pid = 1234;
    run.script = "bench.lua";
    run.deadline = 2e9;
    ledger.begin_run(run);
    CHECK_THROWS_AS(ledger.begin_run(run), LedgerError);
  }
  struct stat st{};
  REQUIRE(stat(state.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(stat((state + "/ledger.db").c_str(), &st) == 0);
  CHECK((st.st_mode & 0077) == 0);

  Ledger again(state);
  auto e = again.find("kept");
  REQUIRE(e);
  CHECK(e->droplet_id == 99);
  CHECK(e->state == ResourceState::created);
  auto runs = again.runs();
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].run_id == "r1");
  CHECK(runs[0].pid == 1234);
  CHECK(runs[0].script == "bench.lua");
  CHECK(runs[0].status == RunStatus::running);
  CHECK(runs[0].deadline == Approx(2e9));
  CHECK(runs[0].started_at > 1.6e9);
  CHECK_FALSE(runs[0].ended_at);
  CHECK(again.finish_run("r1", RunStatus::crashed));
  CHECK_FALSE(again.finish_run("r9", RunStatus::finished));
  runs = again.runs();
  CHECK(runs[0].status == RunStatus::crashed);
  CHECK(runs[0].ended_at);

  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((state + "/ledger.db").c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(s) == SQLITE_ROW);
  CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, 0))) == "wal");
  sqlite3_finalize(s);
  sqlite3_close(db);
}

TEST_CASE("Ledger: two connections write at once", "[ledger]") {
  TempDir dir;
  constexpr int kEach = 8;
  auto writer = [&](const std::string& run, std::int64_t base, std::string* error) {
    try {
      Ledger ledger(dir.path);  // its own connection, like another runara process
      RunRecord r;
      r.run_id = run;
      r.pid = base;
      r.script = run + ".lua";
      ledger.begin_run(r);
      for (int i = 0; i < kEach; ++i) {
        const std::string name = run + "-" + std::to_string(i);
        ledger.record_intent(intent(run, name));
        ledger.record_id(name, base + i);
        if (i % 2 == 0) ledger.mark_destroying("https://api.digitalocean.com", base + i);
        ledger.pending(run);
      }
      ledger.finish_run(run, RunStatus::finished);
    } catch (const std::exception& e) {
      *error = e.what();
    }
  };
  std::string e1, e2;
  std::thread t1(writer, "p1", 1000, &e1);
  std::thread t2(writer, "p2", 2000, &e2);
  t1.join();
  t2.join();
  CHECK(e1.empty());
  CHECK(e2.empty());

  Ledger ledger(dir.path);
  CHECK(ledger.pending("p1").size() == kEach);
  CHECK(ledger.pending("p2").size() == kEach);
  CHECK(ledger.pending_all().size() == 2 * kEach);
  int destroying = 0;
  for (const auto& e : ledger.pending_all()) {
    REQUIRE(e.droplet_id);
    if (e.state == ResourceState::destroying) ++destroying;
  }
  CHECK(destroying == 2 * ((kEach + 1) / 2));
  auto runs = ledger.runs();
  REQUIRE(runs.size() == 2);
  for (const auto& r : runs) CHECK(r.status == RunStatus::finished);
}

TEST_CASE("Ledger state names round-trip", "[ledger]") {
  for (auto s : {ResourceState::intent, ResourceState::created, ResourceState::destroying,
                 ResourceState::destroyed, ResourceState::create_failed})
    CHECK(runara::parse_resource_state(runara::to_string(s)) == s);
  for (auto s : {RunStatus::running, RunStatus::finished, RunStatus::crashed})
    CHECK(runara::parse_run_status(runara::to_string(s)) == s);
  CHECK_FALSE(runara::parse_resource_state("gone"));
  CHECK_THROWS_AS(Ledger("/proc/definitely/not/here"), LedgerError);
}

TEST_CASE("Ledger keys rows by API endpoint and records the account", "[ledger]") {
  TempDir dir;
  Ledger ledger(dir.path);
  LedgerIntent real = intent("r1", "on-real");
  real.account = "acct-real";
  LedgerIntent fake = intent("r2", "on-fake");
  fake.api_base = "http://127.0.0.1:18080/";  // a trailing slash names the same endpoint
  fake.account = "acct-fake";
  ledger.record_intent(real);
  ledger.record_intent(fake);
  ledger.record_id("on-real", 7);
  ledger.record_id("on-fake", 7);  // the same id on two endpoints: two different droplets

  CHECK(names(ledger.pending_at("https://api.digitalocean.com")) == std::vector<std::string>{"on-real"});
  CHECK(names(ledger.pending_at("http://127.0.0.1:18080")) == std::vector<std::string>{"on-fake"});
  CHECK(names(ledger.pending_at("http://127.0.0.1:18080//")) == std::vector<std::string>{"on-fake"});
  CHECK(ledger.pending_at("http://127.0.0.1:18081").empty());
  CHECK(ledger.find("on-real")->account == "acct-real");
  CHECK(ledger.find("on-fake")->api_base == "http://127.0.0.1:18080");

  // Destroying id 7 through the fake leaves the real endpoint's row alone.
  CHECK(ledger.mark_destroyed("http://127.0.0.1:18080/", 7));
  CHECK(ledger.find("on-fake")->state == ResourceState::destroyed);
  CHECK(ledger.find("on-real")->state == ResourceState::created);
}

TEST_CASE("Ledger upgrades a version-1 file: its rows are kept, with no account", "[ledger]") {
  TempDir dir;
  const std::string path = dir.path + "/ledger.db";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  const char* v1 =
      "CREATE TABLE resources (name TEXT PRIMARY KEY, run_id TEXT NOT NULL, tag TEXT NOT NULL, api_base TEXT NOT "
      "NULL, created_at REAL NOT NULL, droplet_id INTEGER, state TEXT NOT NULL, price_hourly REAL NOT NULL DEFAULT "
      "0, size TEXT NOT NULL DEFAULT '', region TEXT NOT NULL DEFAULT '', updated_at REAL NOT NULL);"
      "INSERT INTO resources VALUES ('old', 'r0', 'runara:run-r0', 'https://api.digitalocean.com', 1, 42, "
      "'created', 0, '', '', 1);"
      "PRAGMA user_version=1;";
  REQUIRE(sqlite3_exec(db, v1, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);

  Ledger ledger(dir.path);
  auto old = ledger.find("old");
  REQUIRE(old);
  CHECK(old->droplet_id == 42);
  CHECK(old->account.empty());
  LedgerIntent in = intent("r1", "new");
  in.account = "acct";
  ledger.record_intent(in);
  CHECK(ledger.find("new")->account == "acct");
}

TEST_CASE("Ledger records a VPC's and a firewall's lifecycle in the generic table", "[ledger]") {
  TempDir dir;
  Ledger ledger(dir.path);
  runara::LedgerResource vpc;
  vpc.kind = "vpc";
  vpc.name = "runara-r1-vpc";
  vpc.run_id = "r1";
  vpc.api_base = "https://api.digitalocean.com/";
  vpc.account = "acct";
  vpc.region = "atl1";
  ledger.record_resource_intent(vpc);
  CHECK_THROWS_AS(ledger.record_resource_intent(vpc), LedgerError);  // (kind, name) is unique
  runara::LedgerResource fw = vpc;
  fw.kind = "firewall";
  fw.name = "runara-r1-vpc";  // the same name under another kind is another resource
  ledger.record_resource_intent(fw);

  auto row = ledger.find_resource("vpc", "runara-r1-vpc");
  REQUIRE(row);
  CHECK(row->state == ResourceState::intent);
  CHECK_FALSE(row->remote_id);
  CHECK(row->api_base == "https://api.digitalocean.com");  // normalized
  CHECK(row->region == "atl1");
  CHECK(row->account == "acct");
  CHECK(row->created_at > 0);

  const std::string uuid = "5a4981aa-9653-4bd1-bef5-d6bff52042e4";
  CHECK(ledger.record_resource_id("vpc", "runara-r1-vpc", uuid));
  CHECK_FALSE(ledger.record_resource_id("vpc", "no-such", uuid));
  row = ledger.find_resource("vpc", "runara-r1-vpc");
  CHECK(row->state == ResourceState::created);
  CHECK(row->remote_id == uuid);  // text: UUIDs, not integers
  CHECK(ledger.pending_resources("r1").size() == 2);
  CHECK(ledger.pending_resources("r2").empty());

  CHECK(ledger.mark_resource("vpc", "runara-r1-vpc", ResourceState::destroying));
  CHECK(ledger.pending_resources("r1").size() == 2);
  CHECK(ledger.mark_resource("vpc", "runara-r1-vpc", ResourceState::destroyed));
  CHECK(ledger.mark_resource("firewall", "runara-r1-vpc", ResourceState::create_failed));
  CHECK(ledger.pending_resources("r1").empty());
  CHECK(ledger.pending_resources_all().empty());
  CHECK(ledger.find_resource("vpc", "runara-r1-vpc")->state == ResourceState::destroyed);
  // Droplets and keys live in their own tables: untouched by any of this.
  CHECK(ledger.pending("r1").empty());
  CHECK(ledger.pending_keys("r1").empty());
}

TEST_CASE("Ledger upgrades a version-3 file: droplets and keys kept, resources table added", "[ledger]") {
  TempDir dir;
  {
    Ledger ledger(dir.path);  // today's schema, then taken back to version 3 by hand
    ledger.record_intent(intent("r0", "runara-r0-a"));
    ledger.record_id("runara-r0-a", 7);
  }
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((dir.path + "/ledger.db").c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "DROP TABLE cloud_resources; PRAGMA user_version=3;", nullptr, nullptr, nullptr) ==
          SQLITE_OK);
  sqlite3_close(db);

  Ledger ledger(dir.path);
  CHECK(ledger.find("runara-r0-a")->droplet_id == 7);
  runara::LedgerResource fw;
  fw.kind = "firewall";
  fw.name = "runara-r0-fw";
  fw.run_id = "r0";
  fw.api_base = "https://api.digitalocean.com";
  ledger.record_resource_intent(fw);
  CHECK(ledger.pending_resources("r0").size() == 1);
  REQUIRE(sqlite3_open((dir.path + "/ledger.db").c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  CHECK(sqlite3_column_int(st, 0) == 4);
  sqlite3_finalize(st);
  // A file from a newer runara is refused, not half understood.
  REQUIRE(sqlite3_exec(db, "PRAGMA user_version=5;", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  CHECK_THROWS_WITH(Ledger(dir.path), Catch::Contains("newer than this runara understands"));
}
