// The target policy of a run, made in one place for every primitive that sends traffic for a
// script (http_load, metrics, s:forward): the run's own endpoints (its droplets' public
// addresses, its simulated servers), the tunnels it opened (judged as the machines they lead
// to), the --allow-host grants and, for a load that carries secrets, where each may go.
//
// The primitives read what the run holds into a RunReach (plain values); this file turns it into
// the TargetPolicy (target_policy.hpp) that judges each connection.
//
// Contract: pure, any thread; no I/O, no Lua.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "net/target_policy.hpp"

namespace runara {

struct RunReach {
  std::vector<std::pair<std::string, int>> reachable;  // address, port (0: any)
  std::vector<TargetPolicy::Tunnel> tunnels;
  std::vector<std::string> grants;                      // --allow-host, as given
  std::map<std::string, std::vector<std::string>> secret_destinations;  // --secret NAME@HOST[:PORT]
};

// `who` names the primitive in refusals ("http_load", "metrics", "s:forward"). `secrets`: the
// names of the secrets the traffic carries, each then allowed only where it may go; `plain_http`:
// they travel unencrypted.
std::shared_ptr<TargetPolicy> make_run_policy(const RunReach& reach, std::string who,
                                              const std::vector<std::string>& secrets = {}, bool plain_http = false);

}  // namespace runara
