#include "run_target_policy.hpp"

#include "runara/runtime.hpp"

namespace runara {

RunReach run_reach(const Context& ctx) {
  RunReach reach;
  reach.reachable = ctx.reachable();
  for (const RunTunnel& t : ctx.tunnels()) {
    reach.tunnels.push_back({t.local_port, t.via, t.via_port, t.via_run_machine, t.to, t.to_port, t.to_run_machine});
  }
  const Permissions& permissions = ctx.permissions();
  reach.grants = permissions.hosts;
  reach.secret_destinations = permissions.secret_destinations;
  return reach;
}

std::shared_ptr<TargetPolicy> run_target_policy(const Context& ctx, std::string who, const std::vector<std::string>& secrets,
                                                bool plain_http) {
  return make_run_policy(run_reach(ctx), std::move(who), secrets, plain_http);
}

}  // namespace runara
