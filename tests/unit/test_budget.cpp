// The money guard: worst case = every machine running until the run's deadline.
#include <catch2/catch.hpp>

#include "cloud/budget.hpp"
#include "cloud/reaper.hpp"

using runara::BudgetLimits;
using runara::check_budget;

TEST_CASE("a create fits when the worst case stays within the budget", "[budget]") {
  BudgetLimits limits;  // $20, 4 droplets
  CHECK(check_budget(limits, "gpu-mi300x1-192gb", 1.99, 2 * 3600.0, {}).ok());  // $3.98
}

TEST_CASE("a create over budget is refused with the figures and the flag to raise", "[budget]") {
  BudgetLimits limits;
  const std::string refusal = check_budget(limits, "gpu-mi300x8-1536gb", 15.92, 2 * 3600.0, {}).error();
  CHECK(refusal.find("$15.92/h") != std::string::npos);
  CHECK(refusal.find("$31.84") != std::string::npos);
  CHECK(refusal.find("budget $20.00") != std::string::npos);
  CHECK(refusal.find("--budget") != std::string::npos);
}

TEST_CASE("machines already running count with what they cost so far and until the deadline", "[budget]") {
  BudgetLimits limits;
  limits.budget_usd = 10;
  std::vector<runara::RunningMachine> running{{1.99, 1.0}, {1.99, 0.5}};
  // 2 h left: others 1.0 + 3.98 + 0.5 + 3.98 = 9.46, plus 0.25*2 = 0.5 -> 9.96 fits; 0.5*2 more does not
  CHECK(check_budget(limits, "s", 0.25, 7200, running).ok());
  CHECK_FALSE(check_budget(limits, "s", 0.5, 7200, running).ok());
}

TEST_CASE("the number of machines is capped", "[budget]") {
  BudgetLimits limits;
  limits.max_droplets = 2;
  std::vector<runara::RunningMachine> running{{0.01, 0}, {0.01, 0}};
  const std::string refusal = check_budget(limits, "s", 0.01, 60, running).error();
  CHECK(refusal.find("--max-droplets") != std::string::npos);
}

TEST_CASE("assumed prices parse SLUG=USD", "[budget]") {
  std::map<std::string, double> prices;
  CHECK(runara::parse_assumed_price("gpu-h100x8-contract=23.92", prices).ok());
  CHECK(prices["gpu-h100x8-contract"] == Approx(23.92));
  CHECK_FALSE(runara::parse_assumed_price("gpu-h100x8", prices).ok());
  CHECK_FALSE(runara::parse_assumed_price("x=cheap", prices).ok());
}

TEST_CASE("durations for reap --older-than", "[budget]") {
  CHECK(runara::parse_duration("90m") == Approx(5400));
  CHECK(runara::parse_duration("2h") == Approx(7200));
  CHECK(runara::parse_duration("1d") == Approx(86400));
  CHECK(runara::parse_duration("30") == Approx(30));
  CHECK(runara::parse_duration("soon") < 0);
}
