// The token in doctl's config.yaml as doctl picks it (runtime/cloud/doctl_config.*): the
// context from --context, $DIGITALOCEAN_CONTEXT or the file's `context:` key selects an entry
// of `auth-contexts:`; "default" is the top-level access-token. `runara --context` itself:
// tests/end_to_end/test_doctl_context.cpp.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "cloud/doctl_config.hpp"

#include "doctl_config_text.hpp"

namespace {

const char* const kConfig = runara::test::kDoctlConfig;

}  // namespace

TEST_CASE("doctl config: the current context, a named one, default, and one that is not there", "[do_client][doctl]") {
  CHECK(runara::doctl_config_token(kConfig, "") == std::optional<std::string>("dop_v1_work"));
  CHECK(runara::doctl_config_token(kConfig, "personal") == std::optional<std::string>("dop_v1_personal"));
  CHECK(runara::doctl_config_token(kConfig, "default") == std::optional<std::string>("dop_v1_default"));
  CHECK_FALSE(runara::doctl_config_token(kConfig, "nosuch").has_value());
  CHECK(runara::doctl_config_token("access-token: 'dop_v1_only'\n", "") == std::optional<std::string>("dop_v1_only"));
  CHECK_FALSE(runara::doctl_config_token("auth-contexts:\n  access-token: nested\n", "").has_value());
}
