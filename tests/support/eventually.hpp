// Polls a condition until it holds or `seconds` pass (for effects another process produces).
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace runara::test {

inline bool eventually(const std::function<bool()>& condition, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return condition();
}

}  // namespace runara::test
