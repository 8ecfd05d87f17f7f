#include "runara/secret_mask.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace runara {

namespace {

// Equal when every byte is; no early exit, so the time taken does not depend on where (or
// whether) the two differ. Eight bytes at a time; memcpy keeps the loads aligned-safe.
bool same_bytes(const char* a, const char* b, std::size_t n) {
  std::uint64_t diff = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    diff |= x ^ y;
  }
  for (; i < n; ++i) diff |= static_cast<std::uint64_t>(static_cast<unsigned char>(a[i] ^ b[i]));
  return diff == 0;
}

// All ones when `condition`, else zero: selects without a branch on secret-dependent data.
std::size_t mask_if(bool condition) { return std::size_t{0} - static_cast<std::size_t>(condition); }

// Overwrites each occurrence of `value` in `text` with `mask` (same length), left to right,
// occurrences not overlapping. Every position is compared in full and written, whether it
// matches or not: the cost depends on the lengths only.
void mask_occurrences(char* text, std::size_t size, const std::string& value, const std::string& mask) {
  const std::size_t m = value.size();
  std::size_t left = 0;   // bytes of the current occurrence still to overwrite
  std::size_t start = 0;  // where the current occurrence began
  for (std::size_t i = 0; i < size; ++i) {
    const bool hit = i + m <= size && same_bytes(text + i, value.data(), m);
    const std::size_t begin = mask_if(hit & (left == 0));
    left = (begin & m) | (~begin & left);
    start = (begin & i) | (~begin & start);
    const std::size_t inside = mask_if(left != 0);
    const std::size_t at = (i - start) & inside;  // 0 outside an occurrence
    const auto keep = static_cast<unsigned char>(~inside);
    text[i] = static_cast<char>((static_cast<unsigned char>(text[i]) & keep) |
                                (static_cast<unsigned char>(mask[at]) & static_cast<unsigned char>(inside)));
    left -= inside & 1;
  }
}

}  // namespace

SecretMask::SecretMask(std::vector<std::pair<std::string, std::string>> values) {
  for (auto& v : values) {
    if (!v.first.empty()) values_.push_back(std::move(v));
  }
}

std::size_t SecretMask::longest() const {
  std::size_t n = 0;
  for (const auto& v : values_) n = std::max(n, v.first.size());
  return n;
}

void SecretMask::apply(char* data, std::size_t size) const {
  for (const auto& [value, mask] : values_) mask_occurrences(data, size, value, mask);
}

}  // namespace runara
