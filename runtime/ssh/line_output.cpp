#include "ssh/line_output.hpp"

#include <algorithm>
#include <utility>

namespace runara::ssh {

// A ring once full: no byte is moved after it was stored (an erase-front buffer would move
// megabytes at once, a stall of the loop).
void LineOutput::keep(std::string_view bytes) {
  total_ += bytes.size();
  if (bytes.size() >= tail_cap_) bytes = bytes.substr(bytes.size() - tail_cap_);
  if (kept_.size() < tail_cap_) {  // still growing
    // Room for the whole tail at once: doubling would copy megabytes in one step (a stall of
    // several ms at 4 -> 8 MiB). Untouched pages cost nothing until output fills them.
    if (kept_.capacity() < tail_cap_) kept_.reserve(tail_cap_);
    const std::size_t room = tail_cap_ - kept_.size();
    kept_.append(bytes.substr(0, room));
    bytes.remove_prefix(std::min(room, bytes.size()));
  }
  while (!bytes.empty()) {
    const std::size_t n = std::min(bytes.size(), tail_cap_ - next_);
    kept_.replace(next_, n, bytes.substr(0, n));
    next_ = (next_ + n) % tail_cap_;
    bytes.remove_prefix(n);
  }
}

void LineOutput::feed(std::string_view bytes) {
  keep(bytes);
  if (!on_line_) return;
  while (!bytes.empty()) {
    const std::size_t nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (partial_.size() + piece.size() > max_line_) {
      // More than a line's worth before its newline: hand out a full piece. Decided on the
      // bytes alone, so the pieces do not depend on how the stream was chunked.
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
  if (kept_.size() < tail_cap_ || next_ == 0) return kept_;
  return kept_.substr(next_) + kept_.substr(0, next_);
}

// The ring put in order where it lies (one move of the older part, no new 8 MiB buffer: at a
// command's end, with the loop waiting), then handed over.
std::string LineOutput::take_tail() {
  if (kept_.size() == tail_cap_ && next_ != 0) {
    std::string newest = kept_.substr(0, next_);
    kept_.erase(0, next_);
    kept_ += newest;  // within the capacity already held
  }
  next_ = 0;
  return std::exchange(kept_, std::string());
}

}  // namespace runara::ssh
