// ssh.connect's decisions before anything is sent: which machine (a droplet of this run, or a
// host granted with --allow-host), which key (the run's own key for its droplets; the user's
// keys, the SSH agent's then --ssh-key or ~/.ssh/id_*, only for granted hosts or when --ssh-key
// is given), and the host-key policy (trust on first use, pinned for the run, for the run's
// droplets; ~/.ssh/known_hosts for every other host).
#include <arpa/inet.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/text.hpp"
#include "script/args.hpp"
#include "guards/permissions.hpp"
#include "runara/runtime.hpp"
#include "ssh/known_hosts.hpp"
#include "ssh_state.hpp"

namespace runara::sshb {

namespace {

const char* const kFn = "ssh.connect";

bool numeric_address(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// A DNS name as getaddrinfo takes it: labels of letters, digits and '-', not starting or ending
// with '-', joined by '.'; nothing a resolver or a log line could read another way.
bool host_name(const std::string& host) {
  if (host.empty() || host.size() > 253) return false;
  std::size_t label = 0;
  for (std::size_t i = 0; i <= host.size(); ++i) {
    const char c = i < host.size() ? host[i] : '.';
    if (c == '.') {
      if (label == 0 || label > 63 || host[i - 1] == '-') return false;
      label = 0;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || (c == '-' && label > 0)) {
      ++label;
    } else {
      return false;
    }
  }
  return true;
}

std::string raw_string_field(lua_State* L, int index, const char* field) {
  lua_pushstring(L, field);
  lua_rawget(L, index);
  std::string out = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  return out;
}

// "HOST", "HOST:PORT", "[V6]:PORT" -> host and port (0: none given).
void split_host(lua_State* L, const std::string& target, std::string& host, int& port) {
  std::string rest = target;
  port = 0;
  if (!rest.empty() && rest[0] == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos) args::raise(L, "%s: target '%s' has '[' without ']'", kFn, target.c_str());
    host = rest.substr(1, close - 1);
    rest = rest.substr(close + 1);
    if (rest.empty()) return;
    if (rest[0] != ':') args::raise(L, "%s: target '%s': expected ':PORT' after ']'", kFn, target.c_str());
    rest = rest.substr(1);
  } else {
    const auto colon = rest.find(':');
    if (colon == std::string::npos || rest.find(':', colon + 1) != std::string::npos) {
      host = rest;  // no port, or a bare IPv6 address
      return;
    }
    host = rest.substr(0, colon);
    rest = rest.substr(colon + 1);
  }
  char* end = nullptr;
  const long p = std::strtol(rest.c_str(), &end, 10);
  if (rest.empty() || *end || p < 1 || p > 65535)
    args::raise(L, "%s: target '%s': the port must be a number from 1 to 65535", kFn, target.c_str());
  port = static_cast<int>(p);
}

// Whether an OpenSSH or PEM private key needs a passphrase.
bool key_is_encrypted(const std::string& pem) {
  if (pem.find("ENCRYPTED") != std::string::npos) return true;  // PEM: Proc-Type / PKCS#8
  const std::string begin = "-----BEGIN OPENSSH PRIVATE KEY-----";
  const auto at = pem.find(begin);
  if (at == std::string::npos) return false;
  std::string b64;
  for (std::size_t i = at + begin.size(); i < pem.size() && b64.size() < 64; ++i)
    if (std::isalnum(static_cast<unsigned char>(pem[i])) || pem[i] == '+' || pem[i] == '/') b64 += pem[i];
  static const std::string abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string raw;
  unsigned acc = 0;
  int bits = 0;
  for (char c : b64) {
    acc = acc << 6 | static_cast<unsigned>(abc.find(c));
    if ((bits += 6) >= 8) raw += static_cast<char>((acc >> (bits -= 8)) & 0xff);
  }
  // "openssh-key-v1\0", then the cipher name as a length-prefixed string: "none" when clear.
  const std::size_t name_at = 15 + 4;
  return raw.size() >= name_at + 4 && raw.compare(name_at, 4, "none") != 0;
}

// The user's SSH agent (SSH_AUTH_SOCK), when it names a socket: "" when there is none.
std::string user_agent_socket() {
  const char* sock = std::getenv("SSH_AUTH_SOCK");
  struct stat st {};
  if (sock == nullptr || *sock == '\0' || ::stat(sock, &st) != 0 || !S_ISSOCK(st.st_mode)) return "";
  return sock;
}

// The user's keys for a granted host (or a droplet created with the user's ssh_keys), as
// OpenSSH picks them: the agent's first, then --ssh-key or else ~/.ssh/id_ed25519, id_ecdsa,
// id_rsa. An encrypted key file is left to the agent (which may hold it unlocked).
void use_user_key(lua_State* L, Context& ctx, LoginPlan& plan) {
  plan.options.agent_socket = user_agent_socket();
  const bool agent = !plan.options.agent_socket.empty();
  std::vector<std::string> candidates;
  const std::string& given = ctx.options().ssh.key_path;
  if (!given.empty()) {
    candidates.push_back(given);
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    for (const char* name : {"id_ed25519", "id_ecdsa", "id_rsa"}) candidates.push_back(std::string(home) + "/.ssh/" + name);
  }
  for (const auto& path : candidates) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      if (!given.empty()) args::raise(L, "%s: cannot read the key given with --ssh-key ('%s')", kFn, path.c_str());
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    if (key_is_encrypted(text.str())) {
      if (agent) continue;
      args::raise(L, "%s: the key '%s' is encrypted with a passphrase, and runara cannot ask for it: load it into "
                  "an SSH agent (ssh-add, with SSH_AUTH_SOCK set) or pass an unencrypted key with --ssh-key PATH",
                  kFn, path.c_str());
    }
    plan.options.private_key = text.str();
    ctx.add_secret("ssh private key", plan.options.private_key);
    return;
  }
  if (!agent)
    args::raise(L, "%s: no key to log in to %s with: start an SSH agent holding your key (SSH_AUTH_SOCK) or pass "
                "--ssh-key PATH", kFn, plan.name.c_str());
}

}  // namespace

LoginPlan plan_login(lua_State* L, Context& ctx) {
  LoginPlan plan;
  int port_in_target = 0;
  if (lua_type(L, 1) == LUA_TTABLE) {
    plan.host = raw_string_field(L, 1, "ip");
    plan.name = raw_string_field(L, 1, "name");
    if (plan.host.empty())
      args::raise(L, "%s: target: the droplet has no public IP yet (create it with wait = true, or call d:refresh())", kFn);
    plan.machine = ctx.machine(plan.host);
    if (!plan.machine)
      args::raise(L, "%s: target: %s is not a droplet this run created (or it was destroyed); log into other "
                  "machines by address, granted with --allow-host", kFn, plan.host.c_str());
  } else if (lua_type(L, 1) == LUA_TSTRING) {
    split_host(L, lua_tostring(L, 1), plan.host, port_in_target);
    if (!numeric_address(plan.host) && !host_name(plan.host))
      args::raise(L, "%s: target '%s': expected an IP address or a host name (letters, digits, '-' and '.', "
                  "at most 253 characters)", kFn, lua_tostring(L, 1));
    plan.machine = ctx.machine(plan.host);
  } else {
    args::fail(L, kFn, 1, "target", "a droplet of this run or a host string such as \"203.0.113.7\" or \"10.0.0.2:2222\"");
  }
  if (!lua_isnoneornil(L, 2)) {
    args::table(L, 2, kFn, "options");
    args::only_fields(L, 2, kFn, {"user", "port", "timeout", "wait_cloud_init", "name", "quiet"});
  }
  const bool has_opts = lua_type(L, 2) == LUA_TTABLE;
  plan.user = has_opts ? args::opt_string(L, 2, kFn, "user").value_or("root") : "root";
  const double port = has_opts ? args::opt_number(L, 2, kFn, "port").value_or(port_in_target ? port_in_target : 22)
                               : (port_in_target ? port_in_target : 22);
  if (port < 1 || port > 65535 || port != static_cast<int>(port))
    args::raise(L, "%s: option 'port' must be a whole number from 1 to 65535", kFn);
  plan.port = static_cast<int>(port);
  if (plan.user.empty() || plan.user.find_first_of(" \t\n@:/") != std::string::npos)
    args::raise(L, "%s: option 'user' must be a user name without spaces, '@', ':' or '/'", kFn);
  const double timeout = has_opts ? args::opt_number(L, 2, kFn, "timeout").value_or(600) : 600;
  if (!(timeout > 0)) args::raise(L, "%s: option 'timeout' must be a number of seconds > 0", kFn);
  if (has_opts) {
    if (auto name = args::opt_string(L, 2, kFn, "name")) plan.name = *name;
  }
  if (plan.name.empty()) plan.name = plan.machine ? plan.machine->name : plan.host;
  if (plan.name.empty()) plan.name = plan.host;
  // The name prefixes the machine's lines on the terminal and names it in log lines: one line,
  // with nothing a terminal obeys (a script's `name` could hold ESC or a line feed).
  plan.name = visible(plan.name, LineFeeds::show);

  if (!plan.machine && !host_allowed(ctx.permissions(), plan.host, plan.port)) {
    const std::string hp = (plan.host.find(':') != std::string::npos ? "[" + plan.host + "]" : plan.host) + ":" +
                           std::to_string(plan.port);
    args::raise(L, "%s: host %s is not granted: a script may log only into the run's own droplets and hosts named "
                "with --allow-host (run with --allow-host %s)", kFn, hp.c_str(), hp.c_str());
  }
  if (plan.machine) {
    // The machine's route (a stand-in cloud's machine: its sshd listens elsewhere and logs in
    // another user) says how it is reached, whatever the script asked.
    const MachineRoute& route = plan.machine->route;
    if (route.ssh_port > 0) plan.port = route.ssh_port;
    if (!route.ssh_user.empty()) plan.user = route.ssh_user;
    plan.options.open_socket = route.open_socket;
  }
  plan.options.address = plan.host;
  plan.options.port = plan.port;
  plan.options.user = plan.user;
  plan.options.connect_timeout_s = timeout;
  if (plan.machine && !plan.machine->ssh_private_key.empty()) {
    plan.options.private_key = plan.machine->ssh_private_key;
    plan.options.retry_auth_failure = true;  // sshd may be up before cloud-init installed the key
  } else if (plan.machine && ctx.options().ssh.key_path.empty()) {
    args::raise(L, "%s: droplet %s was created with your own ssh_keys, so runara has no key for it: pass "
                "--ssh-key PATH with the matching private key", kFn, plan.name.c_str());
  } else {
    use_user_key(L, ctx, plan);
  }
  return plan;
}

std::function<bool(const ssh::HostKey&)> host_key_policy(SshRun& run, SessionBox& box, const RunMachine* machine) {
  const bool ours = machine != nullptr;
  auto pin = machine ? machine->pin_host_key : nullptr;
  return [&run, &box, ours, pin](const ssh::HostKey& key) {
    Context& ctx = *run.ctx;
    const std::string id = box.host + ":" + std::to_string(box.port);
    const std::string shown = box.name == box.host ? id : box.name + " (" + id + ")";
    if (auto it = run.pinned.find(id); it != run.pinned.end()) {
      if (it->second == key.fingerprint) return true;
      box.host_key_error = "the host key of " + shown + " CHANGED during this run: it was " + it->second +
                           ", now it is " + key.fingerprint + "; refusing to log in (the machine was replaced, or "
                           "someone is intercepting the connection)";
      ctx.log("ssh: WARNING: " + box.host_key_error);
      return false;
    }
    if (ours) {
      run.pinned[id] = key.fingerprint;
      if (pin) pin(key.fingerprint);
      ctx.log("ssh: " + shown + " host key " + key.type + " " + key.fingerprint + " (trusted on first use, pinned for the run)");
      return true;
    }
    const auto& o = ctx.options().ssh;
    const std::string file = o.known_hosts.empty() ? ssh::default_known_hosts() : o.known_hosts;
    const auto check = ssh::check_known_host(box.session->raw(), file, box.host, box.port, key);
    if (check.verdict == ssh::KnownHost::Match) {
      run.pinned[id] = key.fingerprint;
      return true;
    }
    const std::string lookup = box.port == 22 ? box.host : "[" + box.host + "]:" + std::to_string(box.port);
    if (check.verdict == ssh::KnownHost::Mismatch) {
      box.host_key_error = "the host key of " + shown + " (" + key.type + " " + key.fingerprint +
                           ") does NOT match the one in " + file + ": refusing to log in. If the host was "
                           "reinstalled, remove the old entry (ssh-keygen -R '" + lookup + "') and check the new one";
      ctx.log("ssh: WARNING: " + box.host_key_error);
      return false;
    }
    if (o.accept_new_host_keys) {
      run.pinned[id] = key.fingerprint;
      ctx.log("ssh: " + shown + " is not in " + (file.empty() ? "known_hosts" : file) + "; accepted its host key " +
              key.type + " " + key.fingerprint + " for this run (--accept-new-host-keys; the file is not changed)");
      return true;
    }
    box.host_key_error = "the host key of " + shown + " (" + key.type + " " + key.fingerprint + ") is unknown: it is not in " +
                         (file.empty() ? std::string("known_hosts ($HOME is unset)") : file) +
                         (check.note.empty() ? "" : " (" + check.note + ")") +
                         "; check the fingerprint and add it (ssh-keyscan -p " + std::to_string(box.port) + " " +
                         box.host + " >> ~/.ssh/known_hosts), or run with --accept-new-host-keys";
    return false;
  };
}

}  // namespace runara::sshb
