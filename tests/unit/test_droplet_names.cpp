// Droplet names and tags a script passes, checked with DigitalOcean's rules and without
// std::regex (which recursed per character: a 50,000-character name was a SIGSEGV); and the
// ownership checks made on the API's answers before anything is destroyed.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "cloud/droplet_names.hpp"
#include "cloud/ownership.hpp"
#include "test_text.hpp"

using runara::droplet_name_error;
using runara::tag_error;

using runara::test::contains;

namespace {
}  // namespace

TEST_CASE("droplet names: DigitalOcean's hostname rule and length, plain code", "[droplet_names]") {
  for (const char* ok : {"a", "web-1", "example.com", "A1.b-2", "-lead", ".lead"}) {
    INFO(ok);
    CHECK(droplet_name_error(ok).empty());
  }
  CHECK(contains(droplet_name_error(""), "must not be empty"));
  CHECK(contains(droplet_name_error("bad_name"), "no underscores"));
  CHECK(contains(droplet_name_error("web-"), "end in a letter or digit"));
  CHECK(contains(droplet_name_error("a b"), "character 2"));
  CHECK(droplet_name_error(std::string(255, 'a')).empty());
  CHECK(contains(droplet_name_error(std::string(256, 'a')), "at most 255"));
  CHECK(contains(droplet_name_error(std::string(20, 'a'), 10), "at most 10"));
  // Hostile sizes: an error quoting a prefix, no crash, no recursion.
  for (std::size_t n : {50000u, 5000000u}) {
    const std::string error = droplet_name_error(std::string(n, 'a'));
    CHECK(contains(error, "(" + std::to_string(n) + " characters)"));
    CHECK(error.size() < 300);
  }
  CHECK(contains(droplet_name_error(std::string(100000, '.')), "too long"));
}

TEST_CASE("tags: letters, digits, _ - :, at most 255, runara: reserved", "[droplet_names]") {
  for (const char* ok : {"web", "env:prod", "a_b-c", "RUNARA", "runara", "my:runara:x"}) {
    INFO(ok);
    CHECK(tag_error(ok).empty());
  }
  CHECK(contains(tag_error(""), "must not be empty"));
  CHECK(contains(tag_error("no spaces"), "character 3"));
  CHECK(tag_error(std::string(255, 't')).empty());
  CHECK(contains(tag_error(std::string(256, 't')), "at most 255"));
  const std::string huge = tag_error(std::string(50000, 't'));
  CHECK(contains(huge, "(50000 characters)"));
  CHECK(huge.size() < 300);
  CHECK(contains(tag_error("runara:run-OTHER"), "reserved"));
  CHECK(contains(tag_error("runara:"), "reserved"));
}

TEST_CASE("ownership: a droplet needs the run's tag; a key its recorded name and fingerprint", "[droplet_names]") {
  using nlohmann::json;
  const std::string tag = "runara:run-ab12cd34";
  CHECK(runara::droplet_ownership_error(json{{"tags", {"runara", tag}}}, tag).empty());
  CHECK_FALSE(runara::droplet_ownership_error(json{{"tags", json::array()}}, tag).empty());
  CHECK_FALSE(runara::droplet_ownership_error(json{{"tags", {"runara", "runara:run-other"}}}, tag).empty());
  CHECK_FALSE(runara::droplet_ownership_error(json{{"tags", "runara:run-ab12cd34"}}, tag).empty());
  CHECK_FALSE(runara::droplet_ownership_error(json(), tag).empty());
  const json key = {{"name", "runara-ab12cd34"}, {"fingerprint", "3b:16:bf"}};
  CHECK(runara::key_ownership_error(key, "runara-ab12cd34", "3b:16:bf").empty());
  CHECK_FALSE(runara::key_ownership_error(key, "runara-ab12cd34", "3b:16:00").empty());
  CHECK_FALSE(runara::key_ownership_error(key, "someone-else", "3b:16:bf").empty());
}
