// What a run's cleanup settled (run_cleanup.hpp), for its three readers: the run's own teardown
// (which times each machine's cost by its droplet id), the guardian's log and `runara reap`.
// Each thing destroyed carries its kind, so no reader has to guess it from the text.
// Plain data: no threads, no calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace runara {

struct Destroyed {
  std::string kind;              // "droplet", "ssh key", "vpc", "firewall"
  std::string what;              // how the logs name it: "123 (name)", "runara-ab12cd34-vpc (uuid)"
  std::int64_t droplet_id = 0;   // a droplet's id (0 for the other kinds)
  std::string line() const { return kind + " " + what; }
};

struct CleanupReport {
  std::vector<Destroyed> destroyed;    // confirmed gone (GET -> 404)
  std::vector<std::string> remaining;  // what could not be confirmed gone
  std::vector<std::string> refused;    // in the ledger but not shown to be the run's: not touched
  std::string error;                   // last API error, if any
  bool complete() const { return remaining.empty(); }
};

}  // namespace runara
