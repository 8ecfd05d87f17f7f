// The `droplet` table: cloud machines for scripts. The work — budget, ledger, guardian,
// teardown — is the DropletFleet's (runtime/cloud/); this file only speaks Lua.
//
//   local d = droplet.create{ size = "gpu-mi300x1-192gb", image = "...", region = "atl1" }
//   print(d.ip, d:cost()); d:destroy()
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "base/build_paths.hpp"
#include "base/clock.hpp"
#include "cloud/droplet_fleet.hpp"
#include "cloud/droplet_names.hpp"
#include "cloud/size_catalog.hpp"
#include "droplet_network_binding.hpp"
#include "kit/functions.hpp"
#include "kit/wait.hpp"
#include "script/args.hpp"
#include "script/pretty.hpp"
#include "script/values.hpp"
#include "runara/primitive.hpp"

namespace runara {

namespace {

const char* const kFn = "droplet.create";
char kMethodsKey;  // registry key of the droplet objects' metatable

DropletFleet& fleet_of(lua_State* L) {
  return *static_cast<DropletFleet*>(lua_touserdata(L, lua_upvalueindex(1)));
}

void set_string(lua_State* L, const char* key, const std::string& value) {
  lua_pushlstring(L, value.data(), value.size());
  lua_setfield(L, -2, key);
}

// Fills the droplet object at the top of the stack from the machine.
void fill(lua_State* L, const Machine& m) {
  lua_pushnumber(L, static_cast<lua_Number>(m.id));
  lua_setfield(L, -2, "id");
  set_string(L, "name", m.name);
  set_string(L, "status", m.status);
  set_string(L, "size", m.size);
  set_string(L, "region", m.region);
  if (!m.ip.empty()) set_string(L, "ip", m.ip);
  if (!m.private_ip.empty()) set_string(L, "private_ip", m.private_ip);
  lua_pushnumber(L, m.price_hourly);
  lua_setfield(L, -2, "price_hourly");
}

void push_machine(lua_State* L, const Machine& m) {
  lua_newtable(L);
  fill(L, m);
  lua_pushlightuserdata(L, &kMethodsKey);
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_setmetatable(L, -2);
}

std::int64_t self_id(lua_State* L, const char* fn) {
  if (lua_type(L, 1) != LUA_TTABLE) args::fail(L, fn, 1, "self", "a droplet (call it with ':')");
  lua_pushliteral(L, "id");
  lua_rawget(L, 1);
  const auto id = static_cast<std::int64_t>(lua_tonumber(L, -1));
  lua_pop(L, 1);
  return id;
}

std::vector<std::string> string_list(lua_State* L, int index, const char* field) {
  std::vector<std::string> out;
  lua_pushstring(L, field);
  lua_rawget(L, index);
  if (lua_istable(L, -1)) {
    for (int i = 1;; ++i) {
      lua_rawgeti(L, -1, i);
      if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        break;
      }
      if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER) {
        args::raise(L, "%s: option '%s' must be a list of strings", kFn, field);
      }
      out.push_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  } else if (!lua_isnil(L, -1)) {
    args::raise(L, "%s: option '%s' must be a list of strings, got %s", kFn, field, luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return out;
}

std::string required(lua_State* L, const char* field, const char* example) {
  auto value = args::opt_string(L, 1, kFn, field);
  if (!value || value->empty()) args::raise(L, "%s: option '%s' is required (e.g. %s = \"%s\")", kFn, field, field, example);
  return *value;
}

// A machine destroyed (by the script, or found gone): its address is no longer the run's, and
// may soon be someone else's. ssh, http_load and metrics forget it, and the tunnels through it.
void forget(Context& ctx, const Machine& m) {
  if (!m.ip.empty()) ctx.remove_machine(m.ip);
}

// The run's own machine: http_load may aim at its public address, ssh may log into it. Its
// private (VPC) address is not reachable from here, where it means this computer's LAN (a load
// agent on a machine in that VPC loads its own private address: http_load.run's `on`).
void remember(Context& ctx, DropletFleet& fleet, const Machine& m) {
  if (m.destroyed_at != 0 || m.destroy_asked) return forget(ctx, m);
  if (m.ip.empty()) return;
  const auto& cloud = ctx.options().cloud;
  // Routes are the host's word about machines of the API they are for, never another's.
  const bool routed = cloud.routes && cloud.api_base == cloud.routes->api_base();
  auto route = routed ? cloud.routes->route(m.ip) : std::nullopt;
  // A machine reached through sockets of its own (one in a network namespace) is not at its
  // address from here: from here that address is this computer's loopback, where it would reach
  // your services. Its sshd (and through it, its tunnels) is reached by those sockets.
  if (!(route && route->open_socket)) ctx.add_reachable(m.ip, 0);
  RunMachine machine;
  machine.name = m.name;
  machine.address = m.ip;
  machine.private_address = m.private_ip;
  if (m.run_key) {
    machine.ssh_private_key = fleet.run_private_key();
    ctx.add_secret("SSH_PRIVATE_KEY", machine.ssh_private_key);
  }
  machine.pin_host_key = [&fleet, name = m.name](const std::string& fingerprint) { fleet.pin_host_key(name, fingerprint); };
  if (route) machine.route = std::move(*route);
  ctx.add_machine(std::move(machine));
}

// The fleet's messages are given to the script as they are (kit::Wait with no name): they
// already say what failed, and scripts match them whole.
std::shared_ptr<kit::Wait> wait_unnamed(lua_State* L, std::function<void()> on_cancel = {}) {
  return kit::Wait::start(L, "", std::move(on_cancel));
}

int create(lua_State* L) {
  args::table(L, 1, kFn, "options");
  args::only_fields(L, 1, kFn, {"name", "size", "image", "region", "ssh_keys", "tags", "user_data", "wait", "timeout", "vpc"});
  CreateRequest request;
  request.name = args::opt_string(L, 1, kFn, "name").value_or("");
  request.size = required(L, "size", "gpu-mi300x1-192gb");
  request.image = required(L, "image", "gpu-amd-base");
  request.region = required(L, "region", "atl1");
  request.user_data = args::opt_string(L, 1, kFn, "user_data").value_or("");
  request.ssh_keys = string_list(L, 1, "ssh_keys");
  request.tags = string_list(L, 1, "tags");
  request.vpc_uuid = vpc_option(L, 1, kFn);
  request.wait = args::opt_bool(L, 1, kFn, "wait").value_or(true);
  request.timeout_s = args::opt_number(L, 1, kFn, "timeout").value_or(900);
  auto& ctx = Context::from(L);
  // Only tags the run owns or the user granted: raised here, at the script's line, before anything
  // is sent (the fleet checks the form and runara's own prefix again).
  for (const auto& tag : request.tags) {
    if (Status allowed = check_script_tag(tag, ctx.permissions().tags); !allowed) {
      if (check_script_tag(tag, {tag})) {  // a grant would allow it: `runara plan` lists the grant asked for
        Activity refused;
        refused.kind = Activity::Kind::grant_refused;
        refused.text = "--allow-tag " + tag;
        ctx.activity(refused);
      }
      args::raise(L, "%s: option 'tags': %s", kFn, allowed.error().c_str());
    }
  }
  DropletFleet& fleet = fleet_of(L);
  auto wait = wait_unnamed(L);
  fleet.create(std::move(request), [wait, &ctx, &fleet](Result<Machine> made) {
    if (!made) return made.error().empty() ? wait->fail(std::string("droplet operation failed")) : wait->fail(made.failure());
    remember(ctx, fleet, *made);
    wait->resume([m = std::move(*made)](lua_State* co) {
      push_machine(co, m);
      return 1;
    });
  });
  return wait->yield(L);
}

// Updates the droplet object the script called it on (kept in the registry while it waits).
int refresh(lua_State* L) {
  const std::int64_t id = self_id(L, "droplet:refresh");
  auto& ctx = Context::from(L);
  lua_pushvalue(L, 1);
  const int self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  auto wait = wait_unnamed(L, [L, self_ref] { luaL_unref(L, LUA_REGISTRYINDEX, self_ref); });
  DropletFleet& fleet = fleet_of(L);
  fleet.refresh(id, [wait, &ctx, &fleet, self_ref, L](Result<Machine> found) {
    if (wait->settled()) return;
    if (!found) {
      luaL_unref(L, LUA_REGISTRYINDEX, self_ref);
      return wait->fail(found.failure());
    }
    remember(ctx, fleet, *found);
    wait->resume([m = std::move(*found), self_ref](lua_State* co) {
      lua_rawgeti(co, LUA_REGISTRYINDEX, self_ref);
      luaL_unref(co, LUA_REGISTRYINDEX, self_ref);
      fill(co, m);
      return 1;
    });
  });
  return wait->yield(L);
}

int destroy(lua_State* L) {
  const std::int64_t id = self_id(L, "droplet:destroy");
  auto& ctx = Context::from(L);
  auto wait = wait_unnamed(L);
  // From the moment it is asked for: whatever the API answers, the script is done with it.
  if (const Machine* m = fleet_of(L).find(id)) forget(ctx, *m);
  fleet_of(L).destroy(id, [wait](Result<Machine> destroyed) {
    if (!destroyed) return wait->fail(destroyed.failure());
    wait->resume([](lua_State* co) {
      lua_pushboolean(co, 1);
      return 1;
    });
  });
  return wait->yield(L);
}

int cost(lua_State* L) {
  const Machine* m = fleet_of(L).find(self_id(L, "droplet:cost"));
  lua_pushnumber(L, m ? m->cost() : 0);
  return 1;
}

int list(lua_State* L) {
  lua_newtable(L);
  int i = 0;
  for (const Machine* m : fleet_of(L).machines()) {
    if (m->destroyed_at != 0) continue;
    push_machine(L, *m);
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

int push_json_value(lua_State* L, nlohmann::json& value) {
  push_json(L, value);
  return 1;
}

int sizes(lua_State* L) {
  bool gpu_only = false;
  if (!lua_isnoneornil(L, 1)) {
    args::table(L, 1, "droplet.sizes", "options");
    args::only_fields(L, 1, "droplet.sizes", {"gpu"});
    gpu_only = args::opt_bool(L, 1, "droplet.sizes", "gpu").value_or(false);
  }
  auto wait = kit::Wait::start(L, "droplet.sizes");
  fleet_of(L).sizes([wait, gpu_only](Result<nlohmann::json> all) {
    if (!all) return wait->fail(all.failure());
    wait->settle<nlohmann::json>(size_catalog(*all, gpu_only), push_json_value);
  });
  return wait->yield(L);
}

int account(lua_State* L) {
  auto wait = kit::Wait::start(L, "droplet.account");
  fleet_of(L).account([wait](Result<nlohmann::json> value) { wait->settle<nlohmann::json>(std::move(value), push_json_value); });
  return wait->yield(L);
}

int droplet_tostring(lua_State* L) {
  lua_pushliteral(L, "name");
  lua_rawget(L, 1);
  lua_pushliteral(L, "id");
  lua_rawget(L, 1);
  lua_pushfstring(L, "droplet %s (%s)", lua_tostring(L, -2) ? lua_tostring(L, -2) : "?",
                  lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
  return 1;
}

class DropletPrimitive final : public Primitive {
 public:
  std::string name() const override { return "droplet"; }

  void open(lua_State* L, Context& ctx) override {
    auto& rt = ctx;
    CloudOptions options = rt.options().cloud;
    if (options.guardian_executable.empty()) {
      options.guardian_executable = build_paths::guardian();
    }
    fleet_ = std::make_unique<DropletFleet>(
        rt.loop(), rt.run_id(), options, [&rt](const std::string& line) { rt.log(line); },
        [&rt](const std::string& line) { rt.progress(line); }, [&rt] { return rt.budget_remaining_s(); });
    fleet_->on_activity = [&rt](const Activity& a) { rt.activity(a); };
    if (!fleet_->token().empty()) rt.add_secret("DIGITALOCEAN_TOKEN", fleet_->token());
    rt.record_machines([this] { return recorded_machines(); });

    lua_pushlightuserdata(L, &kMethodsKey);
    lua_newtable(L);  // metatable of droplet objects
    using kit::Waits;
    lua_newtable(L);  // methods
    kit::set_functions(L, rt, {{"refresh", refresh, Waits::yes}, {"destroy", destroy, Waits::yes}, {"cost", cost}},
                       fleet_.get());
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, droplet_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "droplet");
    lua_setfield(L, -2, "__metatable");
    mark_displayable(L, -1);  // the REPL shows "droplet NAME (ID)", not its raw fields
    lua_rawset(L, LUA_REGISTRYINDEX);

    lua_newtable(L);
    kit::set_functions(L, rt,
                       {{"create", create, Waits::yes},
                        {"sizes", sizes, Waits::yes},
                        {"account", account, Waits::yes},
                        {"list", list}},
                       fleet_.get());
    add_droplet_network_functions(L, rt, fleet_.get());
  }

  void teardown(Context&, std::function<void(std::string)> done) override {
    if (!fleet_) return done({});
    fleet_->teardown([done](Status torn_down) { done(torn_down.error()); });
  }

  std::string pending_teardown() const override { return fleet_ ? fleet_->pending() : ""; }

 private:
  // Unrounded: the record is where the exact figure lives (printed costs are rounded).
  std::vector<RecordedMachine> recorded_machines() const {
    std::vector<RecordedMachine> out;
    for (const Machine* m : fleet_->machines()) {
      const double end = m->destroyed_at != 0 ? m->destroyed_at : monotonic_seconds();
      out.push_back({m->name, m->size, m->region, m->id, m->price_hourly,
                     m->created_at == 0 ? 0 : std::max(0.0, end - m->created_at), m->cost()});
    }
    return out;
  }

  std::unique_ptr<DropletFleet> fleet_;
};

}  // namespace

std::unique_ptr<Primitive> make_droplet_primitive() { return std::make_unique<DropletPrimitive>(); }

}  // namespace runara
