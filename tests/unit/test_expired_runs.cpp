// The deadline tag a droplet carries and the choice of `runara reap --expired` made from it, on
// listings as the API gives them (runtime/cloud/deadline_tag.hpp, expired_runs.hpp). The same
// command against the fake DigitalOcean API, as a process: end_to_end/test_reap_expired.cpp.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "cloud/deadline_tag.hpp"
#include "cloud/droplet_names.hpp"
#include "cloud/expired_runs.hpp"
#include "test_text.hpp"

using nlohmann::json;
using runara::test::contains;

namespace {

json droplet(std::int64_t id, json tags) { return {{"id", id}, {"name", "d" + std::to_string(id)}, {"tags", tags}}; }

std::set<std::int64_t> ids(const std::vector<runara::ExpiredDroplet>& list) {
  std::set<std::int64_t> out;
  for (const auto& e : list) out.insert(e.droplet.value("id", std::int64_t{0}));
  return out;
}

std::string why(const runara::ExpiredSelection& s, std::int64_t id) {
  for (const auto& e : s.kept) {
    if (e.droplet.value("id", std::int64_t{0}) == id) return e.why_kept;
  }
  return "(not kept)";
}

}  // namespace

TEST_CASE("deadline tag: written rounded up and read back strictly", "[expired_runs]") {
  CHECK(runara::deadline_tag(1767225600) == "runara:deadline-1767225600");
  CHECK(runara::deadline_tag(1767225600.2) == "runara:deadline-1767225601");  // never earlier
  CHECK(runara::parse_deadline_tag("runara:deadline-1767225600") == 1767225600.0);
  for (const char* bad : {"runara:deadline-", "runara:deadline--5", "runara:deadline-1e9", "runara:deadline-12x",
                          "runara:deadline-1234567890123", "runara:run-1767225600", "deadline-1767225600"}) {
    INFO(bad);
    CHECK_FALSE(runara::parse_deadline_tag(bad).has_value());
  }
  // A tag runara writes is one DigitalOcean accepts (the reserved prefix aside: it is runara's).
  const std::string tag = runara::deadline_tag(4102444800);
  CHECK(contains(runara::check_tag(tag).error(), "reserved"));
  CHECK(tag.size() < runara::kMaxTagLength);
  // The latest of several, and nothing from a shape that is not a list of strings.
  CHECK(runara::droplet_deadline(droplet(1, {"runara:deadline-100", "runara:deadline-300", 7})) == 300.0);
  CHECK_FALSE(runara::droplet_deadline(json{{"tags", "runara:deadline-100"}}).has_value());
  CHECK_FALSE(runara::droplet_deadline(json::array()).has_value());
}

TEST_CASE("reap --expired's choice: whole runs whose every deadline passed and nothing else", "[expired_runs]") {
  const double now = 10000;
  const json listed = json::array({
      droplet(1, {"runara", "runara:run-aaaa", "runara:deadline-9000"}),   // expired run, two machines
      droplet(2, {"runara", "runara:run-aaaa", "runara:deadline-8000"}),
      droplet(3, {"runara", "runara:run-bbbb", "runara:deadline-20000"}),  // in the future
      droplet(4, {"runara", "runara:run-cccc"}),                           // an earlier runara's: no deadline
      droplet(5, {"runara", "runara:deadline-1"}),                         // no run tag: not a run's
      droplet(6, {"runara", "runara:run-dddd", "runara:deadline-9000"}),   // a run with one machine to go
      droplet(7, {"runara", "runara:run-dddd", "runara:deadline-20000"}),
      droplet(8, {"runara", "runara:run-eeee", "runara:deadline-9500"}),   // within the grace below
      json("not an object"),
  });
  const auto s = runara::select_expired(listed, now, 0);
  CHECK(ids(s.reap) == std::set<std::int64_t>{1, 2, 8});
  CHECK(contains(why(s, 3), "not passed"));
  CHECK(contains(why(s, 4), "no deadline tag"));
  CHECK(contains(why(s, 5), "no runara:run- tag"));
  CHECK(contains(why(s, 6), "its run dddd has a droplet kept"));
  CHECK(contains(why(s, 7), "not passed"));

  const auto graced = runara::select_expired(listed, now, 600);
  CHECK(ids(graced.reap) == std::set<std::int64_t>{1, 2});
  CHECK(contains(why(graced, 8), "600 s grace"));

  const auto one = runara::select_expired(listed, now, 0, "eeee");
  CHECK(ids(one.reap) == std::set<std::int64_t>{8});

  CHECK(runara::select_expired(json::object(), now, 0).reap.empty());
}
