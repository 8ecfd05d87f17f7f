// The money guard: before each create, the worst case — every machine running until the run's
// hard deadline — must fit the budget. Enforced here in C++; scripts can only tighten it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace runara {

struct BudgetLimits {
  double budget_usd = 20;    // --budget
  int max_droplets = 4;      // --max-droplets
  std::map<std::string, double> assumed_prices;  // --assume-price SLUG=USD_PER_HOUR
};

struct RunningMachine {
  double price_hourly = 0;
  double accrued_usd = 0;  // already spent on it
};

// "" if a machine at `price_hourly` may start now; otherwise the refusal, with the figures and
// the flag to change. `remaining_s` is the time left until the run's hard deadline.
Status check_budget(const BudgetLimits& limits, const std::string& size, double price_hourly,
                         double remaining_s, const std::vector<RunningMachine>& running);

std::string format_dollars(double usd);  // "$1.99"

// Parses "SLUG=PRICE" into `into`, or says what is wrong with it.
Status parse_assumed_price(const std::string& text, std::map<std::string, double>& into);

}  // namespace runara
