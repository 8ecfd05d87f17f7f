// A program's argv and environment laid out as exec wants them, built before any fork.
//
// Why: the tests start children while other threads run (the fake APIs' server threads). A
// forked child may only make async-signal-safe calls until it execs; malloc or setenv there
// can block forever on a lock another thread held at the fork (GCC 12's AddressSanitizer
// allocator is not fork-safe at all). So everything is allocated here, in the parent.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace runara::test {

class ExecImage {
 public:
  // `env`: entries added to (or replacing in) the current environment; std::nullopt removes one.
  ExecImage(std::vector<std::string> argv, const std::map<std::string, std::optional<std::string>>& env);

  char* const* argv() { return argv_ptrs_.data(); }
  char* const* envp() { return env_ptrs_.data(); }
  const char* path() const { return argv_.front().c_str(); }

 private:
  std::vector<std::string> argv_, env_;
  std::vector<char*> argv_ptrs_, env_ptrs_;
};

}  // namespace runara::test
