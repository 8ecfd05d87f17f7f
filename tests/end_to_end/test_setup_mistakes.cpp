// Issue 37, item 5: a mistake in the user's setup is a usage error, said as such, through the
// real build/runara: exit status 2, one line that says what to do, no Lua traceback, no results
// folder and no `runara runs` row (the run did nothing). Each mistake as a new user makes it: no
// DigitalOcean token, a size the cloud does not sell, no SSH key for a machine of theirs, its host
// key not in known_hosts, a port that refuses the connection (at once, not after a minute of
// retries), an `--on` URL that is not an OpenAI-compatible server, `runara bench --tokenizer`
// given a Hugging Face id, a training size or fine-tuning model runara does not know.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "loopback_fixtures.hpp"
#include "sshd_fixture.hpp"
#include "test_text.hpp"

using namespace runara::test;

namespace {

std::string script(const std::string& name) { return std::string(RUNARA_SOURCE_DIR) + "/scripts/" + name; }

// A user with no cloud token, no doctl login, no SSH key, agent or known_hosts, and a run
// history of their own.
struct NewUser {
  std::string dir = temp_dir("setup-mistake");
  std::string out = dir + "/out";  // made by the run, if it leaves one
  std::map<std::string, std::string> env{{"HOME", dir + "/home"},
                                         {"RUNARA_STATE_DIR", dir + "/state"},
                                         {"DIGITALOCEAN_TOKEN", ""},
                                         {"DIGITALOCEAN_ACCESS_TOKEN", ""},
                                         {"SSH_AUTH_SOCK", ""}};
  NewUser() { std::filesystem::create_directories(dir + "/home/.ssh"); }

  ChildResult run(std::vector<std::string> args, double timeout_s = 60) {
    args.insert(args.begin(), {"--out", out});
    return run_runara(args, timeout_s, env);
  }
  std::string history() { return run_runara({"runs", "--json"}, 30, env).out; }
};

// Exit 2, the message on stderr's last runara line, no traceback, nothing left behind.
void check_usage_error(NewUser& user, const ChildResult& r, const std::string& message) {
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "runara: " + message));
  CHECK_FALSE(contains(r.err, "stack traceback"));
  CHECK_FALSE(contains(r.err, ".lua:"));  // no script line: the mistake is the command line's
  CHECK_FALSE(contains(r.err, "results in"));
  CHECK_FALSE(contains(r.out, "PARTIAL"));
  CHECK_FALSE(std::filesystem::exists(user.out));
  CHECK(contains(user.history(), "[]"));
}

}  // namespace

TEST_CASE("setup mistake: no DigitalOcean token says how to set one and that --sim rehearses for free", "[setup]") {
  NewUser user;
  const auto r = user.run({script("llama70b_fp8.lua")});
  check_usage_error(user, r, "no DigitalOcean token: set DIGITALOCEAN_TOKEN");
  CHECK(contains(r.err, "rehearse for free on the simulated cloud with --sim"));
}

TEST_CASE("setup mistake: a size the cloud does not sell names the close ones", "[setup]") {
  NewUser user;
  const auto r = user.run({"--sim", script("llama70b_fp8.lua"), "size=gpu-h100x1-80gbb"});
  check_usage_error(user, r, "unknown size 'gpu-h100x1-80gbb': ");
  CHECK(contains(r.err, "(did you mean 'gpu-h100x1-80gb'?); close ones: gpu-h100x1-80gb, gpu-h100x8-640gb"));
}

TEST_CASE("setup mistake: a machine of yours without --ssh-key, or with a host key known_hosts lacks", "[setup]") {
  SshdFixture sshd;
  const std::string on = "--on=" + sshd.user() + "@127.0.0.1:" + std::to_string(sshd.port());
  {
    NewUser user;
    const auto r = user.run({on, script("gemm.lua")});
    check_usage_error(user, r, "no key to log in to gemm with: pass --ssh-key PATH");
  }
  {
    NewUser user;
    const auto r = user.run({on, "--ssh-key", sshd.user_key_path(), script("gemm.lua")});
    check_usage_error(user, r, "the host key of gemm (127.0.0.1:" + std::to_string(sshd.port()) + ") (");
    CHECK(contains(r.err, "is unknown: it is not in " + user.dir + "/home/.ssh/known_hosts"));
    CHECK(contains(r.err, "ssh-keyscan -p " + std::to_string(sshd.port()) + " 127.0.0.1 >> ~/.ssh/known_hosts), or run with --accept-new-host-keys"));
  }
}

TEST_CASE("setup mistake: a machine of yours that refuses the connection fails at once", "[setup]") {
  SshdFixture sshd(false);  // keys made, nobody listening
  NewUser user;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = user.run({"--on", "root@127.0.0.1:" + std::to_string(sshd.port()), "--ssh-key", sshd.user_key_path(),
                           script("gemm.lua")});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  check_usage_error(user, r, "cannot connect to root@127.0.0.1:" + std::to_string(sshd.port()) + ": TCP connect: ");
  CHECK(contains(r.err, "nothing listens for SSH on port " + std::to_string(sshd.port())));
  CHECK_FALSE(contains(r.err, "waiting for SSH"));  // no retry
  CHECK(seconds < 15);  // was 58 s of retries
}

TEST_CASE("setup mistake: --on a URL that is not an OpenAI-compatible server", "[setup]") {
  runara_test::LocalServer web;  // answers 404 to everything
  web.start();
  NewUser user;
  const std::string url = "http://127.0.0.1:" + std::to_string(web.port);
  const auto r = user.run({"--on", url, script("serving_sweep.lua")});
  check_usage_error(user, r, "--on " + url + " is not an OpenAI-compatible server: GET /v1/models answered HTTP 404");
}

TEST_CASE("setup mistake: runara bench --tokenizer given a Hugging Face id says to download tokenizer.json", "[setup]") {
  NewUser user;
  const auto r = run_runara({"bench", "http://127.0.0.1:9", "--model", "m", "--tokenizer", "meta-llama/Llama-3.1-8B-Instruct",
                             "-n", "4", "--out", user.out}, 30, user.env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "runara bench: --tokenizer expects a file, and 'meta-llama/Llama-3.1-8B-Instruct' looks like a "
                        "Hugging Face model id"));
  CHECK(contains(r.err, "download its tokenizer.json"));
  CHECK_FALSE(contains(r.err, "stack traceback"));
  CHECK_FALSE(std::filesystem::exists(user.out));
}

TEST_CASE("setup mistake: training.check_sizes and finetune's model check are usage errors like the param checks", "[setup]") {
  {
    NewUser user;
    const auto r = user.run({"--sim", script("training.lua"), "sizes=small,70b"});
    check_usage_error(user, r, "param sizes=small,70b: unknown size '70b'; known: small");
  }
  {
    NewUser user;
    const auto r = user.run({"--sim", script("finetune.lua"), "model=foo/bar"});
    check_usage_error(user, r, "param model=foo/bar: runara knows no torchtune config for it");
  }
  {  // the scripts' own param checks, inside the scenario's body: no PARTIAL report either
    NewUser user;
    const auto r = user.run({"--sim", script("training.lua"), "dtypes=fp64"});
    check_usage_error(user, r, "param dtypes=fp64: 'fp64' is not one of fp16, bf16");
  }
}
