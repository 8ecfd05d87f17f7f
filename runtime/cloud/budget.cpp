#include "cloud/budget.hpp"

#include <cmath>
#include <cstdlib>

namespace runara {

std::string format_dollars(double usd) {
  char text[32];
  std::snprintf(text, sizeof text, "$%.2f", usd);
  return text;
}

Status check_budget(const BudgetLimits& limits, const std::string& size, double price_hourly,
                         double remaining_s, const std::vector<RunningMachine>& running) {
  if (static_cast<int>(running.size()) + 1 > limits.max_droplets) {
    return Error{"this would be droplet number " + std::to_string(running.size() + 1) +
                 " of the run, above the limit of " + std::to_string(limits.max_droplets) +
                 " (raise it with --max-droplets N)"};
  }
  const double hours = std::max(0.0, remaining_s) / 3600.0;
  double others = 0;
  for (const auto& m : running) others += m.accrued_usd + m.price_hourly * hours;
  const double mine = price_hourly * hours;
  if (others + mine <= limits.budget_usd + 1e-9) return {};
  char figures[256];
  std::snprintf(figures, sizeof figures, "%s at %s/h for the %.2f h left before the run's deadline = %s",
                size.c_str(), format_dollars(price_hourly).c_str(), hours, format_dollars(mine).c_str());
  std::string message = "the worst case cost would exceed the budget: " + std::string(figures);
  if (!running.empty()) {
    message += ", plus " + format_dollars(others) + " for the " + std::to_string(running.size()) +
               " droplet(s) already running";
  }
  return Error{message + ", total " + format_dollars(others + mine) + " > budget " + format_dollars(limits.budget_usd) +
               " (raise it with --budget USD, or shorten the run with --max-runtime / watchdog.limit)"};
}

Status parse_assumed_price(const std::string& text, std::map<std::string, double>& into) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return Error{"--assume-price expects SLUG=USD_PER_HOUR, got '" + text + "'"};
  char* end = nullptr;
  const double price = std::strtod(text.c_str() + eq + 1, &end);
  if (!end || *end != '\0' || !(price >= 0) || !std::isfinite(price)) {
    return Error{"--assume-price " + text + ": the price must be a number of dollars per hour"};
  }
  into[text.substr(0, eq)] = price;
  return {};
}

}  // namespace runara
