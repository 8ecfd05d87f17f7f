// `runara --context NAME`: the doctl context named picks the token from doctl's config.yaml
// (the choice itself: tests/unit/test_doctl_config.cpp); an unknown one is named in the error,
// and no token of the file shows.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "child_process.hpp"

#include "doctl_config_text.hpp"

namespace {

const char* const kConfig = runara::test::kDoctlConfig;

}  // namespace

TEST_CASE("runara --context picks the doctl context's token; an unknown one is named in the error", "[cli][doctl]") {
  const std::string dir = runara::test::temp_dir("doctl");
  std::filesystem::create_directories(dir + "/home/.config/doctl");
  std::ofstream(dir + "/home/.config/doctl/config.yaml") << kConfig;
  const std::map<std::string, std::string> env{{"HOME", dir + "/home"}, {"XDG_CONFIG_HOME", ""},
                                               {"DIGITALOCEAN_TOKEN", ""}, {"DIGITALOCEAN_ACCESS_TOKEN", ""},
                                               {"RUNARA_DO_API_URL", "http://127.0.0.1:9"}};
  const auto r = runara::test::run_runara({"--out", dir + "/out", "--context", "nosuch", "-e", "droplet.sizes()"}, 30, env);
  INFO(r.err);
  CHECK(r.exit_code == 2);  // a setup mistake: a usage error
  CHECK(r.err.find("no DigitalOcean token for doctl context 'nosuch' (--context)") != std::string::npos);
  CHECK(r.err.find("dop_v1_") == std::string::npos);
}
