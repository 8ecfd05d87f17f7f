// droplet.vpc, droplet.firewall, droplet.check; see droplet_network_binding.hpp.
//
//   local vpc = droplet.vpc{ region = "atl1" }
//   local d = droplet.create{ size = ..., image = ..., region = "atl1", vpc = vpc }
//   droplet.firewall{ ports = { 6379, "29500-29510" }, sources = { "203.0.113.7" } }
#include "droplet_network_binding.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "cloud/droplet_fleet.hpp"
#include "cloud/firewall_rules.hpp"
#include "kit/functions.hpp"
#include "kit/wait.hpp"
#include "script/args.hpp"
#include "runara/primitive.hpp"

namespace runara {

namespace {

constexpr std::size_t kMaxEntryLength = 64;  // an IPv6 CIDR block is at most 43 characters

DropletFleet& fleet_of(lua_State* L) {
  return *static_cast<DropletFleet*>(lua_touserdata(L, lua_upvalueindex(1)));
}

void set_string(lua_State* L, const char* key, const std::string& value) {
  lua_pushlstring(L, value.data(), value.size());
  lua_setfield(L, -2, key);
}

void push_list(lua_State* L, const char* key, const std::vector<std::string>& values) {
  lua_createtable(L, static_cast<int>(values.size()), 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    lua_pushlstring(L, values[i].data(), values[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  lua_setfield(L, -2, key);
}

// A list option of strings (and, with `numbers`, whole numbers), read raw and bounded: a script
// cannot make C++ hold more than `max` entries.
std::vector<std::string> bounded_list(lua_State* L, const char* fn, const char* field, std::size_t max, bool numbers) {
  std::vector<std::string> out;
  lua_pushstring(L, field);
  lua_rawget(L, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return out;
  }
  if (!lua_istable(L, -1)) args::raise(L, "%s: option '%s' must be a list, got %s", fn, field, luaL_typename(L, -1));
  const std::size_t n = lua_objlen(L, -1);
  if (n > max) args::raise(L, "%s: option '%s' has %d entries; at most %d", fn, field, static_cast<int>(n), static_cast<int>(max));
  for (std::size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, -1, static_cast<int>(i));
    if (numbers && lua_type(L, -1) == LUA_TNUMBER) {
      const double v = lua_tonumber(L, -1);
      if (v != std::floor(v) || v < 1 || v > 65535) {
        args::raise(L, "%s: option '%s', entry %d: %s is not a port (a whole number 1-65535)", fn, field,
                    static_cast<int>(i), lua_tostring(L, -1));
      }
      out.push_back(std::to_string(static_cast<long>(v)));
    } else if (lua_type(L, -1) == LUA_TSTRING) {
      // A port range or an address with its prefix is short: a long string is refused, not copied.
      if (lua_objlen(L, -1) > kMaxEntryLength) {
        args::raise(L, "%s: option '%s', entry %d is %d characters long; at most %d", fn, field, static_cast<int>(i),
                    static_cast<int>(lua_objlen(L, -1)), static_cast<int>(kMaxEntryLength));
      }
      out.push_back(lua_tostring(L, -1));
    } else {
      args::raise(L, "%s: option '%s', entry %d: expected %s, got %s", fn, field, static_cast<int>(i),
                  numbers ? "a port number or a string such as \"29500-29510\"" : "a string", luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return out;
}

int vpc(lua_State* L) {
  const char* fn = "droplet.vpc";
  args::table(L, 1, fn, "options");
  args::only_fields(L, 1, fn, {"region", "ip_range", "existing"});
  VpcRequest request;
  request.region = args::opt_string(L, 1, fn, "region").value_or("");
  request.ip_range = args::opt_string(L, 1, fn, "ip_range").value_or("");
  request.existing = args::opt_string(L, 1, fn, "existing").value_or("");
  if (Status valid = check_vpc_request(request); !valid) args::raise(L, "%s: %s", fn, valid.error().c_str());
  // An account VPC is account-wide: its other machines (a database, say) may admit whatever joins
  // it. The run joins one only when the user named it.
  if (!request.existing.empty()) {
    const auto& granted = Context::from(L).permissions().vpcs;
    if (std::find(granted.begin(), granted.end(), request.existing) == granted.end()) {
      Activity refused;  // `runara plan` lists the grant asked for
      refused.kind = Activity::Kind::grant_refused;
      refused.text = "--allow-vpc " + request.existing;
      Context::from(L).activity(refused);
      args::raise(L, "%s: option 'existing': the account's VPC '%s' is not the run's to join: its other machines may "
                     "trust whatever is in it. Leave 'existing' out for a VPC of the run's own, or grant this one "
                     "with --allow-vpc %s", fn, request.existing.c_str(), request.existing.c_str());
    }
  }
  auto wait = kit::Wait::start(L, fn);
  fleet_of(L).vpc(std::move(request), [wait](Result<VpcInfo> made) {
    wait->settle<VpcInfo>(std::move(made), [](lua_State* co, VpcInfo& v) {
      lua_newtable(co);
      set_string(co, "id", v.id);
      set_string(co, "name", v.name);
      set_string(co, "region", v.region);
      set_string(co, "ip_range", v.ip_range);
      lua_pushboolean(co, v.owned);
      lua_setfield(co, -2, "owned");
      return 1;
    });
  });
  return wait->yield(L);
}

int firewall(lua_State* L) {
  const char* fn = "droplet.firewall";
  args::table(L, 1, fn, "options");
  args::only_fields(L, 1, fn, {"ports", "sources"});
  FirewallRequest request;
  request.ports = bounded_list(L, fn, "ports", kMaxFirewallPorts, true);
  request.sources = bounded_list(L, fn, "sources", kMaxFirewallSources, false);
  if (Status valid = check_firewall_lists(request.ports, request.sources); !valid) {
    args::raise(L, "%s: %s", fn, valid.error().c_str());
  }
  auto wait = kit::Wait::start(L, fn);
  fleet_of(L).firewall(std::move(request), [wait](Result<FirewallInfo> made) {
    wait->settle<FirewallInfo>(std::move(made), [](lua_State* co, FirewallInfo& f) {
      lua_newtable(co);
      set_string(co, "id", f.id);
      set_string(co, "name", f.name);
      push_list(co, "ports", f.ports);
      push_list(co, "sources", f.sources);
      return 1;
    });
  });
  return wait->yield(L);
}

int check(lua_State* L) {
  const char* fn = "droplet.check";
  args::table(L, 1, fn, "options");
  args::only_fields(L, 1, fn, {"size", "count", "region"});
  const auto size = args::opt_string(L, 1, fn, "size");
  if (!size || size->empty()) args::raise(L, "%s: option 'size' is required (e.g. size = \"gpu-mi300x8-1536gb\")", fn);
  const std::string region = args::opt_string(L, 1, fn, "region").value_or("");
  const double count = args::opt_number(L, 1, fn, "count").value_or(1);
  if (count != std::floor(count) || count < 1 || count > 1000) {
    args::raise(L, "%s: option 'count' must be a whole number from 1 to 1000, got %f", fn, count);
  }
  auto wait = kit::Wait::start(L, "");  // the refusal is the create's own wording, unprefixed
  fleet_of(L).check(*size, region, static_cast<int>(count), [wait](Status fits) {
    if (!fits) return wait->fail(fits.failure());
    wait->resume([](lua_State* co) {
      lua_pushboolean(co, 1);
      return 1;
    });
  });
  return wait->yield(L);
}

// A VPC id as the API writes it: a UUID (8-4-4-4-12 hex digits).
bool looks_like_uuid(const std::string& id) {
  if (id.size() != 36) return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? id[i] != '-' : !std::isxdigit(static_cast<unsigned char>(id[i]))) return false;
  }
  return true;
}

}  // namespace

std::string vpc_option(lua_State* L, int index, const char* fn) {
  lua_pushliteral(L, "vpc");
  lua_rawget(L, index);
  std::string id;
  if (lua_istable(L, -1)) {
    lua_pushliteral(L, "id");
    lua_rawget(L, -2);
    if (lua_type(L, -1) == LUA_TSTRING) id = lua_tostring(L, -1);
    lua_pop(L, 1);
  } else if (lua_type(L, -1) == LUA_TSTRING) {
    id = lua_tostring(L, -1);
  } else if (!lua_isnil(L, -1)) {
    args::raise(L, "%s: option 'vpc' must be a VPC from droplet.vpc{} or its id, got %s", fn, luaL_typename(L, -1));
  } else {
    lua_pop(L, 1);
    return {};
  }
  lua_pop(L, 1);
  if (!looks_like_uuid(id)) {
    args::raise(L, "%s: option 'vpc' must be a VPC from droplet.vpc{} or its id (a UUID), got '%s'", fn, id.c_str());
  }
  return id;
}

void add_droplet_network_functions(lua_State* L, Context& ctx, DropletFleet* fleet) {
  using kit::Waits;
  kit::set_functions(L, ctx, {{"vpc", vpc, Waits::yes}, {"firewall", firewall, Waits::yes}, {"check", check, Waits::yes}},
                     fleet);
}

}  // namespace runara
