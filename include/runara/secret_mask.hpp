// The run's secrets as a value that masks bytes off the Lua thread: a download being written on
// libuv's thread pool masks each block before it reaches the output folder.
//
// Threading: a snapshot, immutable once made; apply() may run on any thread, several at once.
// Rule and cost as Context::redact: each occurrence of a value becomes its mask, exactly as long
// as the value, and the time taken depends only on the lengths (docs/permissions.md, "Redaction
// is not an oracle"). Ownership: plain value, copy it where it is needed.
#pragma once

#include "runara/export.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace runara {

class RUNARA_API SecretMask {
 public:
  SecretMask() = default;
  // Pairs of (value, mask); empty values are ignored.
  explicit SecretMask(std::vector<std::pair<std::string, std::string>> values);

  bool empty() const { return values_.empty(); }
  // The longest value's length: a stream masked block by block holds back this many bytes less
  // one, so an occurrence split between two blocks is still found.
  std::size_t longest() const;
  // Masks every occurrence in data[0, size), in place, left to right, occurrences not overlapping.
  void apply(char* data, std::size_t size) const;

 private:
  std::vector<std::pair<std::string, std::string>> values_;
};

}  // namespace runara
