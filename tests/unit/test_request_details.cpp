// save_detailed's per-request arrays (load/request_details.hpp): vLLM's keys and units, request
// order across workers, and the two bounds (measured requests, the run's memory budget) that
// leave the arrays null with the reason, never a load that grows without bound.
#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/request_details.hpp"

namespace {

runara::RequestRecord finished(std::uint64_t index, bool ok) {
  runara::RequestRecord r;
  r.index = index;
  r.sent_ns = 1000000;
  r.first_token_ns = ok ? 21000000 : -1;  // 20 ms after the send
  r.done_ns = 40000000;
  r.error = ok ? runara::ErrorKind::kNone : runara::ErrorKind::kHttpStatus;
  return r;
}

}  // namespace

TEST_CASE("save_detailed keeps vLLM's arrays in request order and units", "[load][details]") {
  std::atomic<std::uint64_t> taken{0};
  runara::RequestDetails first(100, nullptr), second(100, nullptr);
  second.add(finished(1, false), {}, "", "HTTP 500: overloaded", taken);
  first.add(finished(0, true), {5000000, 6000000}, " hello world", "", taken);
  runara::RequestRecord warm = finished(2, true);
  warm.warmup = true;
  first.add(warm, {1}, "warm", "", taken);  // not measured: not kept
  runara::RequestDetails all(100, nullptr);
  all.merge(std::move(second));
  all.merge(std::move(first));
  nlohmann::json out;
  all.to_json(out);
  CHECK(out["ttfts"] == nlohmann::json::array({0.02, 0.0}));
  CHECK(out["itls"] == nlohmann::json::parse("[[0.005, 0.006], []]"));
  CHECK(out["generated_texts"] == nlohmann::json::array({" hello world", ""}));
  CHECK(out["errors"] == nlohmann::json::array({"", "HTTP 500: overloaded"}));
  CHECK(out["detailed_left_out"].is_null());
}

TEST_CASE("save_detailed past its bounds: null arrays and the reason", "[load][details]") {
  SECTION("more measured requests than the bound") {
    std::atomic<std::uint64_t> taken{0};
    runara::RequestDetails details(2, nullptr);
    for (std::uint64_t i = 0; i < 3; ++i) details.add(finished(i, true), {}, "x", "", taken);
    nlohmann::json out;
    details.to_json(out);
    CHECK(out["ttfts"].is_null());
    CHECK(out["generated_texts"].is_null());
    CHECK(out["detailed_left_out"].get<std::string>().find("more than 2 measured requests") != std::string::npos);
  }
  SECTION("the run's memory budget has no room: what was kept is given back") {
    auto budget = std::make_shared<runara::MemoryBudget>(std::size_t{1} << 16);
    std::atomic<std::uint64_t> taken{0};
    runara::RequestDetails details(1000, budget);
    const std::string text(4096, 'a');
    for (std::uint64_t i = 0; i < 40; ++i) details.add(finished(i, true), {}, text, "", taken);
    CHECK_FALSE(details.complete());
    CHECK(budget->reserved() == 0);
    nlohmann::json out;
    details.to_json(out);
    CHECK(out["itls"].is_null());
    CHECK(out["detailed_left_out"].get<std::string>().find("--max-memory") != std::string::npos);
  }
}

TEST_CASE("save_detailed's JSON copy is charged: a budget that holds the details but not the copy leaves the arrays null", "[load][details]") {
  auto budget = std::make_shared<runara::MemoryBudget>(std::size_t{1} << 16);
  std::atomic<std::uint64_t> taken{0};
  runara::RequestDetails details(1000, budget);
  const std::string text(4096, 'a');
  for (std::uint64_t i = 0; i < 10; ++i) details.add(finished(i, true), {1000, 2000}, text, "", taken);
  REQUIRE(details.complete());  // the details fit (about 41 KiB of 64)...
  const std::size_t held = budget->reserved();
  nlohmann::json out;
  details.to_json(out);  // ...their copy (as large again) does not
  CHECK(out["generated_texts"].is_null());
  CHECK(out["itls"].is_null());
  CHECK(out["detailed_left_out"].get<std::string>().find("JSON copy") != std::string::npos);
  CHECK(out["detailed_left_out"].get<std::string>().find("--max-memory") != std::string::npos);
  CHECK(budget->reserved() == held);  // nothing taken for a copy not made

  SECTION("with room for both, the copy is made and stays charged until the details go") {
    auto roomy = std::make_shared<runara::MemoryBudget>(std::size_t{1} << 20);
    {
      runara::RequestDetails kept(1000, roomy);
      std::atomic<std::uint64_t> n{0};
      for (std::uint64_t i = 0; i < 10; ++i) kept.add(finished(i, true), {1000, 2000}, text, "", n);
      const std::size_t before = roomy->reserved();
      nlohmann::json copy;
      kept.to_json(copy);
      CHECK(copy["generated_texts"].size() == 10);
      CHECK(roomy->reserved() > before + 10 * text.size());
    }
    CHECK(roomy->reserved() == 0);
  }
}
