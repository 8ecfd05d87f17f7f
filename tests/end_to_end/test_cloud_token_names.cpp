// The cloud API token under every name it can come from (DIGITALOCEAN_TOKEN,
// DIGITALOCEAN_ACCESS_TOKEN) is never handed to a script: --allow-env and --secret refuse those
// names with an explanation, os.getenv refuses them even when a host grants them, and no message
// suggests `--secret DIGITALOCEAN_TOKEN`.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "child_process.hpp"
#include "runara/runtime.hpp"
#include "test_text.hpp"

using runara::test::run_runara;
using runara::test::temp_dir;

using runara::test::contains;

namespace {

constexpr const char* kToken = "dop_v1_test_token_never_shown_0123456789abcdef";


}  // namespace

TEST_CASE("cli: --allow-env and --secret refuse every name of the cloud token", "[cli][secrets]") {
  for (const std::string name : {"DIGITALOCEAN_TOKEN", "DIGITALOCEAN_ACCESS_TOKEN"}) {
    for (const std::string flag : {"--allow-env", "--secret"}) {
      INFO(flag << " " << name);
      auto r = run_runara({"--out", temp_dir("token-names"), flag, name, "-e", "print(os.getenv('" + name + "'))"}, 30,
                          {{name, kToken}});
      INFO(r.out << r.err);
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, flag + " " + name));
      CHECK(contains(r.err, "cloud API token"));
      CHECK_FALSE(contains(r.out + r.err, kToken));
      CHECK_FALSE(contains(r.out + r.err, "--secret DIGITALOCEAN_TOKEN "));
    }
  }
}

TEST_CASE("runara.secret and os.getenv on a token name never suggest --secret", "[cli][secrets]") {
  for (const std::string name : {"DIGITALOCEAN_TOKEN", "DIGITALOCEAN_ACCESS_TOKEN"}) {
    INFO(name);
    auto r = run_runara({"--out", temp_dir("token-names"), "-e",
                         "print(pcall(runara.secret, '" + name + "'))\nprint(pcall(os.getenv, '" + name + "'))"},
                        30, {{name, kToken}});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_FALSE(contains(r.out + r.err, kToken));
    CHECK_FALSE(contains(r.out + r.err, "--secret"));
    CHECK_FALSE(contains(r.out + r.err, "--allow-env"));
    CHECK(contains(r.out, "cloud API token"));
  }
}

TEST_CASE("os.getenv refuses the token's names even when a host grants them", "[embed][secrets]") {
  // Each test case runs in its own process under ctest, so setting the variable is contained.
  setenv("DIGITALOCEAN_ACCESS_TOKEN", kToken, 1);
  std::string printed;
  runara::Events events;
  events.print = [&](std::string_view t) { printed += t; };
  runara::Options options;
  options.out_dir = temp_dir("token-embed");
  options.permissions.env = {"DIGITALOCEAN_ACCESS_TOKEN", "DIGITALOCEAN_TOKEN"};
  runara::Runtime rt(options, events);
  auto out = rt.run_string("print(pcall(os.getenv, 'DIGITALOCEAN_ACCESS_TOKEN'))");
  unsetenv("DIGITALOCEAN_ACCESS_TOKEN");
  INFO(printed << out.message);
  CHECK(out.exit == runara::Exit::ok);
  CHECK(contains(printed, "false"));
  CHECK(contains(printed, "cloud API token"));
  CHECK_FALSE(contains(printed, kToken));
}
