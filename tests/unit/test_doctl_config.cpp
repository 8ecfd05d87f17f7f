// The token in doctl's config.yaml as doctl picks it (runtime/cloud/doctl_config.*): the
// context from --context, $DIGITALOCEAN_CONTEXT or the file's `context:` key selects an entry
// of `auth-contexts:`; "default" is the top-level access-token. And `runara --context`.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "child_process.hpp"
#include "cloud/doctl_config.hpp"

namespace {

// As `doctl auth init --context work` leaves it, with the current context switched to "work".
const char* const kConfig =
    "access-token: dop_v1_default\n"
    "auth-contexts:\n"
    "  personal: \"dop_v1_personal\"\n"
    "  work: dop_v1_work # the team's\n"
    "context: work\n"
    "output: text\n";

}  // namespace

TEST_CASE("doctl config: the current context, a named one, default, and one that is not there", "[do_client][doctl]") {
  CHECK(runara::doctl_config_token(kConfig, "") == std::optional<std::string>("dop_v1_work"));
  CHECK(runara::doctl_config_token(kConfig, "personal") == std::optional<std::string>("dop_v1_personal"));
  CHECK(runara::doctl_config_token(kConfig, "default") == std::optional<std::string>("dop_v1_default"));
  CHECK_FALSE(runara::doctl_config_token(kConfig, "nosuch").has_value());
  CHECK(runara::doctl_config_token("access-token: 'dop_v1_only'\n", "") == std::optional<std::string>("dop_v1_only"));
  CHECK_FALSE(runara::doctl_config_token("auth-contexts:\n  access-token: nested\n", "").has_value());
}

TEST_CASE("runara --context picks the doctl context's token; an unknown one is named in the error", "[cli][doctl]") {
  const std::string dir = runara::test::temp_dir("doctl");
  std::filesystem::create_directories(dir + "/home/.config/doctl");
  std::ofstream(dir + "/home/.config/doctl/config.yaml") << kConfig;
  const std::map<std::string, std::string> env{{"HOME", dir + "/home"}, {"XDG_CONFIG_HOME", ""},
                                               {"DIGITALOCEAN_TOKEN", ""}, {"DIGITALOCEAN_ACCESS_TOKEN", ""},
                                               {"RUNARA_DO_API_URL", "http://127.0.0.1:9"}};
  const auto r = runara::test::run_runara({"--out", dir + "/out", "--context", "nosuch", "-e", "droplet.sizes()"}, 30, env);
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("no DigitalOcean token for doctl context 'nosuch' (--context)") != std::string::npos);
  CHECK(r.err.find("dop_v1_") == std::string::npos);
}
