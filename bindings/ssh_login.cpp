// ssh.connect's target and options, read and checked before anything is sent: which machine (a
// droplet of this run, or a host granted with --allow-host), which key (the run's own key for
// its droplets; the user's keys, ssh/login_plan.hpp, only for granted hosts or when --ssh-key is
// given), and the host-key rules (ssh/host_key_policy.hpp: pinned for the run's droplets,
// ~/.ssh/known_hosts for every other host).
#include "base/text.hpp"
#include "guards/permissions.hpp"
#include "kit/raise.hpp"
#include "runara/runtime.hpp"
#include "script/args.hpp"
#include "ssh/login_plan.hpp"
#include "ssh_state.hpp"

namespace runara::sshb {

namespace {

const char* const kFn = "ssh.connect";

std::string raw_string_field(lua_State* L, int index, const char* field) {
  lua_pushstring(L, field);
  lua_rawget(L, index);
  std::string out = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  return out;
}

// Index 1: a droplet of this run, or a host string. Its port, when the string gave one.
int read_target(lua_State* L, Context& ctx, ssh::MachineLogin& login, const RunMachine*& machine) {
  if (lua_type(L, 1) == LUA_TTABLE) {
    login.host = raw_string_field(L, 1, "ip");
    login.name = raw_string_field(L, 1, "name");
    if (login.host.empty())
      args::raise(L, "%s: target: the droplet has no public IP yet (create it with wait = true, or call d:refresh())", kFn);
    machine = ctx.machine(login.host);
    if (!machine)
      args::raise(L, "%s: target: %s is not a droplet this run created (or it was destroyed); log into other "
                  "machines by address, granted with --allow-host", kFn, login.host.c_str());
    return 0;
  }
  if (lua_type(L, 1) != LUA_TSTRING)
    args::fail(L, kFn, 1, "target", "a droplet of this run or a host string such as \"203.0.113.7\" or \"10.0.0.2:2222\"");
  const ssh::HostPort target = kit::value_or_raise(L, kFn, ssh::parse_target(lua_tostring(L, 1)));
  login.host = target.host;
  machine = ctx.machine(login.host);
  return target.port;
}

// Index 2: user, port, timeout, name (wait_cloud_init and quiet are read by the caller).
double read_options(lua_State* L, ssh::MachineLogin& login, int port_in_target) {
  if (!lua_isnoneornil(L, 2)) {
    args::table(L, 2, kFn, "options");
    args::only_fields(L, 2, kFn, {"user", "port", "timeout", "wait_cloud_init", "name", "quiet"});
  }
  const bool has_opts = lua_type(L, 2) == LUA_TTABLE;
  const double default_port = port_in_target ? port_in_target : 22;
  login.user = has_opts ? args::opt_string(L, 2, kFn, "user").value_or("root") : "root";
  const double port = has_opts ? args::opt_number(L, 2, kFn, "port").value_or(default_port) : default_port;
  if (port < 1 || port > 65535 || port != static_cast<int>(port))
    args::raise(L, "%s: option 'port' must be a whole number from 1 to 65535", kFn);
  login.port = static_cast<int>(port);
  if (login.user.empty() || login.user.find_first_of(" \t\n@:/") != std::string::npos)
    args::raise(L, "%s: option 'user' must be a user name without spaces, '@', ':' or '/'", kFn);
  const double timeout = has_opts ? args::opt_number(L, 2, kFn, "timeout").value_or(600) : 600;
  if (!(timeout > 0)) args::raise(L, "%s: option 'timeout' must be a number of seconds > 0", kFn);
  if (has_opts) {
    if (auto name = args::opt_string(L, 2, kFn, "name")) login.name = *name;
  }
  return timeout;
}

// The run's own key for its droplets; the user's keys for anything else.
void choose_key(lua_State* L, Context& ctx, ssh::ConnectPlan& plan, const RunMachine* machine) {
  if (machine && !machine->ssh_private_key.empty()) {
    plan.options.private_key = machine->ssh_private_key;
    plan.options.retry_auth_failure = true;  // sshd may be up before cloud-init installed the key
  } else if (machine && ctx.options().ssh.key_path.empty()) {
    args::raise(L, "%s: droplet %s was created with your own ssh_keys, so runara has no key for it: pass "
                "--ssh-key PATH with the matching private key", kFn, plan.login.name.c_str());
  } else {
    kit::check(L, kFn, ssh::user_keys(plan.options, ctx.options().ssh.key_path, plan.login.name));
    if (!plan.options.private_key.empty()) ctx.add_secret("ssh private key", plan.options.private_key);
  }
}

}  // namespace

ssh::ConnectPlan plan_login(lua_State* L, Context& ctx) {
  ssh::ConnectPlan plan;
  ssh::MachineLogin& login = plan.login;
  const RunMachine* machine = nullptr;
  const int port_in_target = read_target(L, ctx, login, machine);
  const double timeout = read_options(L, login, port_in_target);
  if (login.name.empty()) login.name = machine ? machine->name : login.host;
  if (login.name.empty()) login.name = login.host;
  // The name prefixes the machine's lines on the terminal and names it in log lines: one line,
  // with nothing a terminal obeys (a script's `name` could hold ESC or a line feed).
  login.name = visible(login.name, LineFeeds::show);
  if (!machine && !host_allowed(ctx.permissions(), login.host, login.port)) {
    const std::string hp = (login.host.find(':') != std::string::npos ? "[" + login.host + "]" : login.host) + ":" +
                           std::to_string(login.port);
    args::raise(L, "%s: host %s is not granted: a script may log only into the run's own droplets and hosts named "
                "with --allow-host (run with --allow-host %s)", kFn, hp.c_str(), hp.c_str());
  }
  if (machine) {
    // The machine's route (a stand-in cloud's machine: its sshd listens elsewhere and logs in
    // another user) says how it is reached, whatever the script asked.
    const MachineRoute& route = machine->route;
    if (route.ssh_port > 0) login.port = route.ssh_port;
    if (!route.ssh_user.empty()) login.user = route.ssh_user;
    plan.options.open_socket = route.open_socket;
  }
  login.run_machine = machine != nullptr;
  plan.options.retry_refused = machine != nullptr;  // a droplet boots; a machine of yours that refuses is set up wrong
  plan.options.address = login.host;
  plan.options.port = login.port;
  plan.options.user = login.user;
  plan.options.connect_timeout_s = timeout;
  choose_key(L, ctx, plan, machine);
  const auto& o = ctx.options().ssh;
  plan.host_keys = {o.known_hosts, o.accept_new_host_keys, machine ? machine->pin_host_key : nullptr};
  plan.wait_cloud_init = lua_type(L, 2) == LUA_TTABLE && args::opt_bool(L, 2, kFn, "wait_cloud_init").value_or(false);
  return plan;
}

}  // namespace runara::sshb
