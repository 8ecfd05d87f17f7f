#include "net/run_policy.hpp"

namespace runara {

std::shared_ptr<TargetPolicy> make_run_policy(const RunReach& reach, std::string who,
                                              const std::vector<std::string>& secrets, bool plain_http) {
  auto policy = std::make_shared<TargetPolicy>(std::move(who));
  for (const auto& [address, port] : reach.reachable) policy->add_reachable(address, port);
  for (const auto& tunnel : reach.tunnels) policy->add_tunnel(tunnel);
  for (const auto& grant : reach.grants) policy->add_grant(grant);
  for (const auto& name : secrets) {
    const auto it = reach.secret_destinations.find(name);
    policy->bind_secret(name, it == reach.secret_destinations.end() ? std::vector<std::string>{} : it->second, plain_http);
  }
  return policy;
}

}  // namespace runara
