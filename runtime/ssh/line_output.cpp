#include "ssh/line_output.hpp"

namespace runara::ssh {

void LineOutput::keep(std::string_view bytes) {
  total_ += bytes.size();
  if (bytes.size() >= tail_cap_) {
    kept_.assign(bytes.substr(bytes.size() - tail_cap_));
    return;
  }
  kept_.append(bytes);
  if (kept_.size() > 2 * tail_cap_) kept_.erase(0, kept_.size() - tail_cap_);
}

void LineOutput::feed(std::string_view bytes) {
  keep(bytes);
  if (!on_line_) return;
  while (!bytes.empty()) {
    const std::size_t nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (partial_.size() + piece.size() >= max_line_ && nl == std::string_view::npos) {
      // No newline in sight and the line is already too long: hand out a full piece.
      const std::size_t take = max_line_ - partial_.size();
      partial_.append(piece.substr(0, take));
      on_line_(partial_);
      partial_.clear();
      bytes.remove_prefix(take);
      continue;
    }
    if (nl == std::string_view::npos) {
      partial_.append(piece);
      return;
    }
    if (partial_.empty()) {
      on_line_(piece);
    } else {
      partial_.append(piece);
      on_line_(partial_);
      partial_.clear();
    }
    bytes.remove_prefix(nl + 1);
  }
}

void LineOutput::finish() {
  if (!partial_.empty() && on_line_) on_line_(partial_);
  partial_.clear();
}

std::string LineOutput::tail() const {
  return kept_.size() > tail_cap_ ? kept_.substr(kept_.size() - tail_cap_) : kept_;
}

}  // namespace runara::ssh
