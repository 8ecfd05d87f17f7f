#include "run_target_policy.hpp"

#include "runara/runtime.hpp"

namespace runara {

std::shared_ptr<TargetPolicy> run_target_policy(const Context& ctx, std::string who) {
  auto policy = std::make_shared<TargetPolicy>(std::move(who));
  for (const auto& [address, port] : ctx.reachable()) policy->add_reachable(address, port);
  for (const RunTunnel& t : ctx.tunnels()) {
    policy->add_tunnel({t.local_port, t.via, t.via_port, t.via_run_machine, t.to, t.to_port, t.to_run_machine});
  }
  for (const auto& grant : ctx.permissions().hosts) policy->add_grant(grant);
  return policy;
}

}  // namespace runara
