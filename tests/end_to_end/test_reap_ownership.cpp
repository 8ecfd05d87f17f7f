// `runara reap` and `runara ls` touch only what runara created, through the API it was created
// with, and never give a false all-clear. Two fake DigitalOcean APIs (two accounts) on
// 127.0.0.1; the ledger is a real file written with the Ledger class, as an earlier run that
// died with its guardian would have left it; `runara` runs as a child process.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <ctime>
#include <map>
#include <regex>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "fake_do_droplets.hpp"
#include "cloud/ledger.hpp"
#include "sim/fake_digitalocean.hpp"
#include "sim/loopback_http_server.hpp"
#include "test_text.hpp"

using runara::test::ChildResult;

using runara::test::contains;

namespace {

constexpr const char* kToken = "reap-test-token-51d0";


runara::sim::FakeDoConfig fake_config(const std::string& account) {
  runara::sim::FakeDoConfig c;
  c.token = kToken;
  c.active_after_s = 0.1;
  c.delete_after_s = 0.1;
  c.enforce_rate_limits = false;
  c.account_uuid = account;
  return c;
}

// Droplets made straight through the API, not by runara (fake_do_droplets.hpp).
std::int64_t create_droplet(const runara::sim::FakeDigitalOcean& fake, const std::string& name,
                            const nlohmann::json& tags) {
  return runara::test::create_droplet(fake, kToken, name, tags);
}

bool exists(const runara::sim::FakeDigitalOcean& fake, std::int64_t id) { return runara::test::droplet_exists(fake, id); }

// The ledger folder of an earlier run `run_id` that died (with its guardian) and left rows.
struct DeadRun {
  std::string state_dir = runara::test::temp_dir("reap-own") + "/state";
  std::string run_id = "deadbeef";

  void record(const std::string& api_base, const std::string& account, std::int64_t id, int n) {
    runara::Ledger ledger(state_dir);
    if (n == 1) {
      runara::RunRecord run;
      run.run_id = run_id;
      run.pid = 999999999;  // no such process: the run is not alive
      ledger.begin_run(run);
    }
    const std::string name = "runara-" + run_id + "-" + std::to_string(n);
    ledger.record_intent({run_id, name, "runara:run-" + run_id, api_base, account, 0.00893, "s-1vcpu-1gb", "nyc3"});
    ledger.record_id(name, id);
  }

  ChildResult runara(const std::vector<std::string>& args, const std::string& api, const std::string& token = kToken) {
    return runara::test::run_runara(args, 60,
                                    {{"RUNARA_DO_API_URL", api},
                                     {"DIGITALOCEAN_TOKEN", token},
                                     {"DIGITALOCEAN_ACCESS_TOKEN", ""},
                                     {"XDG_CONFIG_HOME", "/nonexistent"},
                                     {"RUNARA_STATE_DIR", state_dir},
                                     {"RUNARA_POLL_S", "0.1"}});
  }
};

// A droplet name, size and region an API might answer with: escape sequences (clear the screen,
// set the window title, the C1 CSI), a bell, a line break that starts a forged line, and a
// right-to-left override that makes the rest read backwards (U+202E: "gpj" as "jpg").
const std::string kHostileText = "evil\x1b[2J\x1b]0;pwned\x07\r\nrunara-forged-line \xc2\x9b" "31m \xe2\x80\xaegpj";

// An API in front of `upstream` (a fake) answering what it answers, except that every droplet
// named in `renamed` comes back with kHostileText in its name, size slug and region slug: an
// impersonated or compromised API. (The fake itself refuses such names on create.)
runara::sim::LoopbackHttpServer::Handler hostile_api(const std::string& upstream, std::vector<std::string> renamed) {
  return [upstream, renamed](const runara::sim::HttpRequest& req) {
    httplib::Client cli(upstream);
    const httplib::Headers headers{{"Authorization", req.header("authorization")}};
    httplib::Result r = req.method == "DELETE" ? cli.Delete(req.target, headers)
                        : req.method == "POST" ? cli.Post(req.target, headers, req.body, "application/json")
                                               : cli.Get(req.target, headers);
    runara::sim::HttpResponse out;
    if (!r) {
      out.status = 502;
      return out;
    }
    out.status = r->status;
    for (const auto& [name, value] : r->headers) {
      if (name != "Content-Length" && name != "Connection" && name != "Keep-Alive") out.headers.emplace_back(name, value);
    }
    out.body = r->body;
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return out;
    auto rename = [&](nlohmann::json& d) {
      if (!d.is_object() || !d.contains("name")) return;
      for (const auto& n : renamed) {
        if (d["name"] != n) continue;
        d["name"] = kHostileText;
        d["size_slug"] = kHostileText;
        if (d.contains("region") && d["region"].is_object()) d["region"]["slug"] = kHostileText;
      }
    };
    if (j.contains("droplet")) rename(j["droplet"]);
    if (j.contains("droplets") && j["droplets"].is_array()) {
      for (auto& d : j["droplets"]) rename(d);
    }
    out.body = j.dump();
    return out;
  };
}

// What a terminal would act on, or a line the API's text began: none may reach runara's output.
void check_inert(const std::string& text) {
  CHECK_FALSE(contains(text, "\x1b"));
  CHECK_FALSE(contains(text, "\x07"));
  CHECK_FALSE(contains(text, "\r"));
  CHECK_FALSE(contains(text, "\xc2\x9b"));
  CHECK_FALSE(contains(text, "\xe2\x80\xae"));
  CHECK_FALSE(contains(text, "\nrunara-forged-line"));
}

}  // namespace

TEST_CASE("reap: ids a run left at API A are never deleted through API B", "[reap][droplet]") {
  runara::sim::FakeDigitalOcean a(fake_config("account-a")), b(fake_config("account-b"));
  a.start();
  b.start();
  // A's droplet is gone; B has an unrelated, untagged droplet that got the same id.
  const std::int64_t id_a = create_droplet(a, "runara-deadbeef-1", {"runara", "runara:run-deadbeef"});
  const std::int64_t id_b = create_droplet(b, "someone-elses-web-1", nlohmann::json::array());
  REQUIRE(id_a == id_b);
  DeadRun run;
  run.record(a.base_url(), "account-a", id_a, 1);

  const ChildResult reap = run.runara({"reap", "--yes"}, b.base_url());
  INFO("runara reap: " << reap.out << reap.err);
  CHECK_FALSE(reap.timed_out);
  CHECK(reap.exit_code == 0);
  CHECK(contains(reap.out, "nothing to reap"));
  CHECK(contains(reap.err, "1 at " + a.base_url() + " (another API endpoint)"));
  CHECK(b.requests("DELETE") == 0);
  CHECK(exists(b, id_b));
  CHECK(exists(a, id_a));  // and A was not talked to at all
  CHECK(a.requests("GET /v2/droplets") == 0);

  // Through A, the same row is reaped.
  const ChildResult reap_a = run.runara({"reap", "--yes"}, a.base_url() + "/");
  INFO("runara reap at A: " << reap_a.out << reap_a.err);
  CHECK(reap_a.exit_code == 0);
  CHECK(contains(reap_a.out, "all reaped"));
  CHECK_FALSE(exists(a, id_a));
  CHECK(exists(b, id_b));
}

TEST_CASE("reap: a recorded id whose droplet lacks the run's tag is reported, not deleted", "[reap][droplet]") {
  runara::sim::FakeDigitalOcean b(fake_config("account-b"));
  b.start();
  const std::int64_t tagged = create_droplet(b, "runara-deadbeef-1", {"runara", "runara:run-deadbeef"});
  const std::int64_t untagged = create_droplet(b, "web-1", nlohmann::json::array());
  const std::int64_t other_run = create_droplet(b, "runara-cafe0001-1", {"runara", "runara:run-cafe0001"});
  DeadRun run;
  run.record(b.base_url(), "account-b", tagged, 1);
  run.record(b.base_url(), "account-b", untagged, 2);
  run.record(b.base_url(), "account-b", other_run, 3);

  const ChildResult reap = run.runara({"reap", "--yes"}, b.base_url());
  INFO("runara reap: " << reap.out << reap.err);
  CHECK_FALSE(reap.timed_out);
  CHECK(reap.exit_code == 1);  // something in the ledger needs a person's look
  CHECK(contains(reap.out, "NOT TOUCHED " + std::to_string(untagged) + " (web-1)"));
  CHECK(contains(reap.out, "no tag runara:run-deadbeef"));
  CHECK(exists(b, untagged));
  CHECK(exists(b, other_run));  // tagged, but for another run: not this row's
  CHECK_FALSE(exists(b, tagged));

  const ChildResult ls = run.runara({"ls"}, b.base_url());
  INFO("runara ls: " << ls.out << ls.err);
  CHECK(ls.exit_code == 0);
  CHECK(contains(ls.out, "not runara's"));
  CHECK_FALSE(contains(ls.out, std::to_string(tagged) + " "));  // gone: the API's answer, not the ledger's
}

TEST_CASE("reap: rows recorded under another account are not touched", "[reap][droplet]") {
  runara::sim::FakeDigitalOcean b(fake_config("account-b"));
  b.start();
  const std::int64_t id = create_droplet(b, "runara-deadbeef-1", {"runara", "runara:run-deadbeef"});
  DeadRun run;
  run.record(b.base_url(), "account-other", id, 1);
  const ChildResult ls = run.runara({"ls"}, b.base_url());
  INFO("runara ls: " << ls.out << ls.err);
  CHECK(contains(ls.err, "another account at " + b.base_url()));
  const ChildResult reap = run.runara({"reap", "--yes", "--run", run.run_id}, b.base_url());
  INFO("runara reap: " << reap.out << reap.err);
  // The droplet carries the run's tag in this account, so the tag search finds it: only the
  // ledger row of the other account is left alone.
  CHECK(contains(reap.err, "another account"));
  CHECK(b.requests("GET /v2/account") >= 2);
}

TEST_CASE("ls: never an all-clear it could not check; --json has the API's answer", "[reap][droplet]") {
  runara::sim::FakeDigitalOcean b(fake_config("account-b"));
  b.start();
  const std::int64_t id = create_droplet(b, "runara-deadbeef-1", {"runara", "runara:run-deadbeef"});
  DeadRun run;
  run.record(b.base_url(), "account-b", id, 1);

  SECTION("no token") {
    const ChildResult ls = run.runara({"ls"}, b.base_url(), "");
    INFO("runara ls: " << ls.out << ls.err);
    CHECK(ls.exit_code == 1);
    CHECK(contains(ls.err, "could not check"));
    CHECK(contains(ls.err, "no DigitalOcean token"));
    CHECK(contains(ls.out, std::to_string(id)));
    CHECK(contains(ls.out, "unchecked"));
    CHECK_FALSE(contains(ls.out, "no machines left"));
  }
  SECTION("a token the API refuses") {
    const ChildResult ls = run.runara({"ls"}, b.base_url(), "wrong-token");
    INFO("runara ls: " << ls.out << ls.err);
    CHECK(ls.exit_code == 1);
    CHECK(contains(ls.err, "could not check"));
    CHECK(contains(ls.err, "401"));
    CHECK_FALSE(contains(ls.out + ls.err, "wrong-token"));
  }
  SECTION("the API unreachable") {
    b.set_unreachable(true);
    const ChildResult ls = run.runara({"ls", "--json"}, b.base_url());
    INFO("runara ls: " << ls.out << ls.err);
    CHECK(ls.exit_code == 1);
    CHECK(contains(ls.err, "could not reach the API"));
    const auto j = nlohmann::json::parse(ls.out);
    CHECK(j["checked"] == false);
    CHECK(j["error"].is_string());
    REQUIRE(j["resources"].size() == 1);
    CHECK(j["resources"][0]["checked"] == false);
  }
  SECTION("--json") {
    const ChildResult ls = run.runara({"ls", "--json"}, b.base_url());
    INFO("runara ls --json: " << ls.out << ls.err);
    CHECK(ls.exit_code == 0);
    const auto j = nlohmann::json::parse(ls.out);
    CHECK(j["checked"] == true);
    REQUIRE(j["resources"].size() == 1);
    const auto& r = j["resources"][0];
    CHECK(r["id"] == id);
    CHECK(r["kind"] == "droplet");
    CHECK(r["run_id"] == "deadbeef");
    CHECK(r["name"] == "runara-deadbeef-1");
    CHECK(r["size"] == "s-1vcpu-1gb");
    CHECK(r["region"] == "nyc3");
    CHECK((r["status"] == "new" || r["status"] == "active"));
    CHECK(r["checked"] == true);
    CHECK(r["created_at"].is_string());
    CHECK(r["price_hourly"].is_number());
  }
  SECTION("a droplet the API no longer has is not listed (the ledger is corrected)") {
    httplib::Client cli(b.base_url());
    cli.set_default_headers({{"Authorization", std::string("Bearer ") + kToken}});
    REQUIRE(cli.Delete("/v2/droplets/" + std::to_string(id)));
    ChildResult ls;
    for (int i = 0; i < 50; ++i) {
      ls = run.runara({"ls"}, b.base_url());
      if (!contains(ls.out, std::to_string(id))) break;
      usleep(100000);
    }
    INFO("runara ls: " << ls.out << ls.err);
    CHECK(ls.exit_code == 0);
    CHECK(contains(ls.out, "no machines left by runara runs at " + b.base_url()));
  }
}

TEST_CASE("guardian: an inherited ledger id without the run's tag survives the cleanup after a SIGKILL",
          "[reap][droplet]") {
  runara::sim::FakeDigitalOcean fake(fake_config("account-b"));
  fake.start();
  DeadRun state;  // only its folder and environment: the run here is alive until killed
  const std::map<std::string, std::string> env{{"RUNARA_DO_API_URL", fake.base_url()},
                                               {"DIGITALOCEAN_TOKEN", kToken},
                                               {"DIGITALOCEAN_ACCESS_TOKEN", ""},
                                               {"XDG_CONFIG_HOME", "/nonexistent"},
                                               {"RUNARA_STATE_DIR", state.state_dir},
                                               {"RUNARA_POLL_S", "0.1"}};
  runara::test::ChildProcess child({RUNARA_BINARY, "--out", state.state_dir + "/../out",
                                    std::string(RUNARA_SOURCE_DIR) + "/tests/scripts/droplet_create.lua", "sleep=300"},
                                   env);
  REQUIRE(child.wait_for_output("ALL ACTIVE 1", 30));
  const std::string out = child.out_so_far();
  const auto run_at = out.find("RUN ");
  REQUIRE(run_at != std::string::npos);
  const std::string run_id = out.substr(run_at + 4, 8);
  // Someone else's droplet, and a ledger row of this run that (wrongly) names its id.
  const std::int64_t stranger = create_droplet(fake, "web-1", nlohmann::json::array());
  {
    runara::Ledger ledger(state.state_dir);
    const std::string name = "runara-" + run_id + "-99";
    ledger.record_intent({run_id, name, "runara:run-" + run_id, fake.base_url(), "account-b", 0, "s-1vcpu-1gb", "nyc3"});
    ledger.record_id(name, stranger);
  }
  child.signal(SIGKILL);
  child.wait(10);
  // The guardian destroys the run's own droplet, and leaves the stranger alone.
  bool own_gone = false;
  for (int i = 0; i < 300 && !own_gone; ++i) {
    own_gone = fake.live_droplets() == 1;
    if (!own_gone) usleep(100000);
  }
  CHECK(own_gone);
  CHECK(exists(fake, stranger));
  std::string log;
  for (int i = 0; i < 100; ++i) {
    log = [&] {
      std::ifstream in(state.state_dir + "/guardian-" + run_id + ".log");
      return std::string(std::istreambuf_iterator<char>(in), {});
    }();
    if (contains(log, "NOT TOUCHED")) break;
    usleep(100000);
  }
  INFO("guardian log: " << log);
  CHECK(contains(log, "NOT TOUCHED"));
  CHECK(contains(log, "does not carry the tag runara:run-" + run_id));
  // Each thing destroyed under its own kind (the report carries it; nothing guessed from the text).
  CHECK(std::regex_search(log, std::regex("destroyed droplet [0-9]+ \\(runara-" + run_id + "-1\\)")));
  CHECK(contains(log, "destroyed ssh key runara-" + run_id + "\n"));
}

TEST_CASE("ls and reap: droplet names, sizes and regions from the API cannot drive the terminal", "[reap][droplet]") {
  runara::sim::FakeDigitalOcean b(fake_config("account-b"));
  b.start();
  runara::sim::LoopbackHttpServer hostile(hostile_api(b.base_url(), {"runara-deadbeef-1", "web-1"}));
  const std::string api = "http://127.0.0.1:" + std::to_string(hostile.start(0));
  const std::int64_t tagged = create_droplet(b, "runara-deadbeef-1", {"runara", "runara:run-deadbeef"});
  const std::int64_t untagged = create_droplet(b, "web-1", nlohmann::json::array());
  DeadRun run;
  run.record(api, "account-b", tagged, 1);
  run.record(api, "account-b", untagged, 2);
  // As cat -v shows them, on the row's own line; the override as <U+202E>.
  const std::string shown = "evil^[[2J^[]0;pwned^G^M^Jrunara-forged-line M-^[31m <U+202E>gpj";

  const ChildResult ls = run.runara({"ls"}, api);
  INFO("runara ls: " << ls.out << ls.err);
  CHECK(ls.exit_code == 0);
  CHECK(contains(ls.out, std::to_string(tagged) + " "));
  CHECK(contains(ls.out, shown));
  check_inert(ls.out + ls.err);

  const ChildResult json = run.runara({"ls", "--json"}, api);
  INFO("runara ls --json: " << json.out << json.err);
  CHECK(json.exit_code == 0);
  check_inert(json.out + json.err);
  const auto j = nlohmann::json::parse(json.out);
  REQUIRE(j["resources"].size() == 2);
  CHECK(j["resources"][0]["name"] == kHostileText);  // JSON escapes it: the exact text, for a program
  CHECK(j["resources"][0]["region"] == kHostileText);

  const ChildResult reap = run.runara({"reap", "--yes"}, api);
  INFO("runara reap: " << reap.out << reap.err);
  CHECK_FALSE(reap.timed_out);
  CHECK(reap.exit_code == 1);  // the untagged one is left for a person to look at
  CHECK(contains(reap.out, "NOT TOUCHED " + std::to_string(untagged) + " (" + shown + ")"));
  CHECK(contains(reap.out, std::to_string(tagged) + "    " + shown));  // the table of what it destroys
  check_inert(reap.out + reap.err);
  CHECK_FALSE(exists(b, tagged));
  CHECK(exists(b, untagged));
}
