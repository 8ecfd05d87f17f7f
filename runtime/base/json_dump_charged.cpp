#include "base/json_dump_charged.hpp"

#include <algorithm>
#include <memory>

namespace runara {

namespace {

struct BudgetRefused {};

// nlohmann's output into a string whose capacity is reserved from the budget before it grows:
// the capacity, not the size, is what the allocator holds.
class ChargedString final : public nlohmann::detail::output_adapter_protocol<char> {
 public:
  ChargedString(std::string& out, MemoryReservation& held, std::size_t& needed)
      : out_(out), held_(held), needed_(needed) {}

  void write_character(char c) override { write_characters(&c, 1); }
  void write_characters(const char* s, std::size_t length) override {
    if (out_.size() + length > out_.capacity()) make_room(out_.size() + length);
    out_.append(s, length);
  }

 private:
  void make_room(std::size_t wanted) {
    const std::size_t capacity = std::max({wanted, out_.capacity() * 2, std::size_t{4096}});
    if (capacity > held_.bytes() && !held_.grow(capacity - held_.bytes())) {
      needed_ = capacity;
      throw BudgetRefused{};
    }
    out_.reserve(capacity);
  }

  std::string& out_;
  MemoryReservation& held_;
  std::size_t& needed_;
};

}  // namespace

std::optional<std::string> dump_json_charged(const nlohmann::json& doc, int indent, MemoryReservation& held,
                                             std::size_t& needed) {
  std::string text;
  nlohmann::detail::serializer<nlohmann::json> writer(std::make_shared<ChargedString>(text, held, needed), ' ');
  try {
    writer.dump(doc, indent >= 0, false, indent >= 0 ? static_cast<unsigned int>(indent) : 0u);
  } catch (const BudgetRefused&) {
    return std::nullopt;
  }
  return text;
}

}  // namespace runara
