// --secret NAME@HOST[:PORT][,...]: where a secret may go, parsed with --allow-host's syntax.
#include <catch2/catch.hpp>

#include "secret_destinations.hpp"

using runara::SecretOption;

TEST_CASE("cli: --secret takes a name and optionally where the secret may go", "[secret]") {
  SecretOption s;
  CHECK(runara::parse_secret_option("HF_TOKEN", s).empty());
  CHECK(s.name == "HF_TOKEN");
  CHECK(s.destinations.empty());
  CHECK(runara::parse_secret_option("OPENAI_API_KEY@api.openai.com:443,[::1]:8000,10.0.0.5", s).empty());
  CHECK(s.name == "OPENAI_API_KEY");
  CHECK(s.destinations == std::vector<std::string>{"api.openai.com:443", "[::1]:8000", "10.0.0.5"});
}

TEST_CASE("a malformed --secret says what was wrong and what was expected", "[secret]") {
  SecretOption s;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "--secret : expected an environment variable's name"},
      {"@host", "--secret @host: expected an environment variable's name"},
      {"K@", "--secret K@: '' is not a destination: expected HOST or HOST:PORT (port 1-65535)"},
      {"K@host:0", "'host:0' is not a destination"},
      {"K@a.example,,b.example", "'' is not a destination"},
      {"K@[::1", "'[::1' is not a destination"},
      {"K@host:65536", "e.g. --secret K@api.example.com:443"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text);
    const std::string error = runara::parse_secret_option(text, s);
    CHECK(error.find(message) != std::string::npos);
  }
}
