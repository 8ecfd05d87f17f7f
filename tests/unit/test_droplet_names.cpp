// Droplet names and tags a script passes, checked with DigitalOcean's rules and without
// std::regex (which recursed per character: a 50,000-character name was a SIGSEGV); and the
// ownership checks made on the API's answers before anything is destroyed.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cloud/droplet_names.hpp"
#include "cloud/ownership.hpp"
#include "test_text.hpp"

using runara::check_droplet_name;
using runara::check_tag;

using runara::test::contains;

namespace {
}  // namespace

TEST_CASE("droplet names: DigitalOcean's hostname rule and length, plain code", "[droplet_names]") {
  for (const char* ok : {"a", "web-1", "example.com", "A1.b-2", "-lead", ".lead"}) {
    INFO(ok);
    CHECK(check_droplet_name(ok).ok());
  }
  CHECK(contains(check_droplet_name("").error(), "must not be empty"));
  CHECK(contains(check_droplet_name("bad_name").error(), "no underscores"));
  CHECK(contains(check_droplet_name("web-").error(), "end in a letter or digit"));
  CHECK(contains(check_droplet_name("a b").error(), "character 2"));
  CHECK(check_droplet_name(std::string(255, 'a')).ok());
  CHECK(contains(check_droplet_name(std::string(256, 'a')).error(), "at most 255"));
  CHECK(contains(check_droplet_name(std::string(20, 'a'), 10).error(), "at most 10"));
  // Hostile sizes: an error quoting a prefix, no crash, no recursion.
  for (std::size_t n : {50000u, 5000000u}) {
    const std::string error = check_droplet_name(std::string(n, 'a')).error();
    CHECK(contains(error, "(" + std::to_string(n) + " characters)"));
    CHECK(error.size() < 300);
  }
  CHECK(contains(check_droplet_name(std::string(100000, '.')).error(), "too long"));
}

TEST_CASE("tags: letters, digits, _ - :, at most 255, runara: reserved", "[droplet_names]") {
  for (const char* ok : {"web", "env:prod", "a_b-c", "RUNARA", "runara", "my:runara:x"}) {
    INFO(ok);
    CHECK(check_tag(ok).ok());
  }
  CHECK(contains(check_tag("").error(), "must not be empty"));
  CHECK(contains(check_tag("no spaces").error(), "character 3"));
  CHECK(check_tag(std::string(255, 't')).ok());
  CHECK(contains(check_tag(std::string(256, 't')).error(), "at most 255"));
  const std::string huge = check_tag(std::string(50000, 't')).error();
  CHECK(contains(huge, "(50000 characters)"));
  CHECK(huge.size() < 300);
  CHECK(contains(check_tag("runara:run-OTHER").error(), "reserved"));
  CHECK(contains(check_tag("runara:").error(), "reserved"));
  // DigitalOcean keeps one tag whatever its case: runara's own prefix is reserved in any case.
  for (const char* reserved : {"RUNARA:run-x", "Runara:run-OTHER", "rUnArA:"}) {
    INFO(reserved);
    CHECK(contains(check_tag(reserved).error(), "is reserved"));
  }
}

TEST_CASE("script tags: the run's own runara-user:NAME, or granted names, case-insensitively", "[droplet_names]") {
  using runara::check_script_tag;
  const std::vector<std::string> none, granted{"db-clients"};
  for (const char* own : {"runara-user:web", "RUNARA-USER:web", "Runara-User:a:b"}) {
    INFO(own);
    CHECK(check_script_tag(own, none).ok());
  }
  // An account tag: a firewall admitting by it (a database's sources.tags) would admit the machine.
  for (const char* account : {"db-clients", "web", "env:prod", "runara", "my:runara-user:x", "runara-users:x"}) {
    INFO(account);
    const std::string error = check_script_tag(account, none).error();
    CHECK(contains(error, "tag '" + std::string(account) + "' is not the run's to set"));
    CHECK(contains(error, "'runara-user:NAME'"));
    CHECK(contains(error, "--allow-tag " + std::string(account)));
  }
  CHECK(contains(check_script_tag("runara-user:", none).error(), "names no tag"));
  for (const char* same : {"db-clients", "DB-Clients", "DB-CLIENTS"}) {
    INFO(same);
    CHECK(check_script_tag(same, granted).ok());
  }
  CHECK_FALSE(check_script_tag("db-clients-2", granted).ok());
  CHECK_FALSE(check_script_tag("db-admins", granted).ok());
  // A grant never lets runara's own prefix, or a malformed tag, through.
  CHECK(contains(check_script_tag("RUNARA:run-x", {"RUNARA:run-x"}).error(), "is reserved"));
  CHECK(contains(check_script_tag("no spaces", {"no spaces"}).error(), "character 3"));
  CHECK(contains(check_script_tag(std::string(300, 't'), none).error(), "at most 255"));
}

TEST_CASE("ownership: a droplet needs the run's tag; a key its recorded name and fingerprint", "[droplet_names]") {
  using nlohmann::json;
  const std::string tag = "runara:run-ab12cd34";
  CHECK(runara::check_droplet_owned(json{{"tags", {"runara", tag}}}, tag).ok());
  CHECK_FALSE(runara::check_droplet_owned(json{{"tags", json::array()}}, tag).ok());
  CHECK_FALSE(runara::check_droplet_owned(json{{"tags", {"runara", "runara:run-other"}}}, tag).ok());
  CHECK_FALSE(runara::check_droplet_owned(json{{"tags", "runara:run-ab12cd34"}}, tag).ok());
  CHECK_FALSE(runara::check_droplet_owned(json(), tag).ok());
  const json key = {{"name", "runara-ab12cd34"}, {"fingerprint", "3b:16:bf"}};
  CHECK(runara::check_key_owned(key, "runara-ab12cd34", "3b:16:bf").ok());
  CHECK_FALSE(runara::check_key_owned(key, "runara-ab12cd34", "3b:16:00").ok());
  CHECK_FALSE(runara::check_key_owned(key, "someone-else", "3b:16:bf").ok());
}
