// The `droplet` table's private-network functions: droplet.vpc, droplet.firewall, droplet.check,
// and the `vpc` option of droplet.create. Thin: options checked (unknown ones, ports, CIDRs,
// list lengths bounded before C++ holds them), the DropletFleet called, its answer pushed.
//
// Contract: Lua thread only; the fleet outlives the functions (it is the primitive's).
#pragma once

#include <string>

#include <lua.hpp>

namespace runara {

class Context;
class DropletFleet;

// Adds vpc, firewall and check to the table at the top of the stack (the `droplet` table).
void add_droplet_network_functions(lua_State* L, Context& ctx, DropletFleet* fleet);
// droplet.create's `vpc` option at options table `index`: a table from droplet.vpc (its `id`)
// or a VPC id; "" when absent. Raises for anything else.
std::string vpc_option(lua_State* L, int index, const char* fn);

}  // namespace runara
