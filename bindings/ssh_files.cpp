// s:upload, s:download (SFTP, files or whole folders, modes kept, progress for large files) and
// s:forward (a 127.0.0.1 listener tunnelled through the session, only to the machine itself, the
// run's droplets or granted hosts). Local paths obey the sandbox:
// an upload reads only what runara.read_file may read (the script's folder, --allow-read; never
// an output folder, not even one nested in a granted folder), a download writes only below the
// run's output folder, reached from its descriptor without following a symlink, with the run's
// secrets masked in what it writes (a machine the script controls can hold their values).
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "guards/permissions.hpp"
#include "kit/raise.hpp"
#include "kit/wait.hpp"
#include "script/args.hpp"
#include "base/run_output.hpp"
#include "run_target_policy.hpp"
#include "ssh_state.hpp"

namespace runara::sshb {

namespace {

namespace fs = std::filesystem;

// A folder being uploaded must not hold an output folder: what runara wrote there is redacted,
// and sending it somewhere the script can read it back would reveal which guesses are secrets.
std::string output_folder_inside(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(root, ec))) return {};
  if (fs::exists(fs::path(root) / kOutputMarker, ec)) return root;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_symlink(ec)) continue;
    if (it->is_directory(ec) && fs::exists(it->path() / kOutputMarker, ec)) return it->path().string();
  }
  return {};
}

// Reserves the transfer's buffers (refused: raised here, nothing started), then waits for it.
int run_transfer(lua_State* L, const char* fn, const std::shared_ptr<ssh::MachineSession>& session,
                 ssh::TransferOptions o) {
  auto reserved = kit::value_or_raise(L, fn, session->reserve_transfer(o));
  const std::string waits_for = std::string(fn) + " on " + session->where();
  auto id = std::make_shared<std::uint64_t>(0);
  std::weak_ptr<ssh::MachineSession> weak = session;
  auto wait = kit::Wait::start(L, waits_for.c_str(), [weak, id] {
    if (auto s = weak.lock()) s->cancel_transfer(*id);
  });
  auto started = session->transfer(std::move(reserved), std::move(o), fn, [wait](Result<ssh::TransferResult> r) {
    wait->settle<ssh::TransferResult>(std::move(r), [](lua_State* co, ssh::TransferResult& done) {
      lua_createtable(co, 0, 3);
      lua_pushnumber(co, static_cast<lua_Number>(done.bytes));
      lua_setfield(co, -2, "bytes");
      lua_pushinteger(co, done.files);
      lua_setfield(co, -2, "files");
      lua_pushnumber(co, done.seconds);
      lua_setfield(co, -2, "seconds");
      return 1;
    });
  });
  if (started) *id = *started;
  else wait->fail(started.error());
  return wait->yield(L);
}

std::string remote_path(lua_State* L, int index, const char* fn) {
  std::string path = args::string(L, index, fn, "remote");
  if (path.empty() || path.find('\0') != std::string::npos)
    args::raise(L, "%s: 'remote' must be a non-empty path without NUL bytes", fn);
  return path;
}

}  // namespace

int session_upload(lua_State* L) {
  const char* fn = "s:upload";
  auto session = check_session(L, 1, fn);
  const std::string local = args::string(L, 2, fn, "local");
  const std::string remote = remote_path(L, 3, fn);
  std::string error;
  const std::string real = run_of(L).ctx->readable_path(local, error);
  if (real.empty()) args::raise(L, "%s: %s", fn, error.c_str());
  if (const std::string inside = output_folder_inside(real); !inside.empty())
    args::raise(L, "%s: '%s' holds a runara output folder ('%s'), which scripts cannot read (runara redacts secrets "
                "from it; sending it away would reveal them); upload a folder without it", fn, local.c_str(), inside.c_str());
  ssh::TransferOptions o;
  o.direction = ssh::TransferOptions::Direction::Upload;
  o.local = real;
  o.remote = remote;
  return run_transfer(L, fn, session, std::move(o));
}

int session_download(lua_State* L) {
  const char* fn = "s:download";
  auto session = check_session(L, 1, fn);
  const std::string remote = remote_path(L, 2, fn);
  const std::string local = args::string(L, 3, fn, "local");
  std::string error;
  const std::string relative = normalize_output_path(local, error);
  if (relative.empty()) args::raise(L, "%s: local path: %s (downloads land in the run's output folder)", fn, error.c_str());
  if (starts_with_reserved_name(relative))
    args::raise(L, "%s: '%s' is written by runara itself; choose another name", fn, local.c_str());
  // The parent folders are made from the output folder's descriptor, refusing any symlink on
  // the way; the engine then writes the destination without following a link in its last part.
  Context& ctx = *run_of(L).ctx;
  const int dir = ctx.open_out_dir(error);
  if (dir < 0) args::raise(L, "%s: %s", fn, error.c_str());
  const auto slash = relative.rfind('/');
  if (slash != std::string::npos) {
    const int parent = open_beneath(dir, relative.substr(0, slash), O_RDONLY | O_DIRECTORY, error);
    if (parent < 0) {
      ::close(dir);
      args::raise(L, "%s: local path '%s': %s", fn, local.c_str(), error.c_str());
    }
    ::close(parent);
  }
  ::close(dir);
  ssh::TransferOptions o;
  o.direction = ssh::TransferOptions::Direction::Download;
  o.local = ctx.out_dir() + "/" + relative;
  o.remote = remote;
  o.mask = ctx.secret_mask();  // the output folder holds no secret, whatever the machine wrote
  return run_transfer(L, fn, session, std::move(o));
}

namespace {

struct ForwardTo {
  std::string host;  // as the machine connects to it
  std::string to;    // RunTunnel::to: "" for the machine itself
  bool to_own = false;
};

// Where a tunnel through `login` to host:port may lead, judged by address before the machine is
// asked for anything: through a granted host it would otherwise reach that host's whole network
// from here. Raises when it may not.
ForwardTo forward_target(lua_State* L, const char* fn, Context& ctx, const ssh::MachineSession& session,
                         const std::string& host, int port) {
  const auto& login = session.login();
  const RunMachine* machine = login.run_machine ? ctx.machine(login.host) : nullptr;
  if (login.run_machine && !machine)
    args::raise(L, "%s: %s was destroyed: it is no longer the run's machine, and no tunnel leads through it", fn,
                session.where().c_str());
  std::vector<std::string> own{login.host};
  if (machine) own.insert(own.end(), {machine->address, machine->private_address});
  std::string why;
  const auto target = run_target_policy(ctx, fn)->tunnel_target(host, port, own, session.where(), why);
  if (!target) args::raise(L, "%s", why.c_str());
  ForwardTo out{target->connect_host, target->to, target->to_own};
  // A machine whose loopback has an address of its own (its route's: one sharing this
  // computer's loopback with others, as --sim-unisolated's do): that is its "own loopback", and
  // so is every other spelling of itself (its private address does not exist here: on this
  // computer it is the LAN's).
  if (machine && !machine->route.loopback.empty() && target->to.empty()) out.host = machine->route.loopback;
  return out;
}

}  // namespace

int session_forward(lua_State* L) {
  const char* fn = "s:forward";
  auto session = check_session(L, 1, fn);
  Context& ctx = *run_of(L).ctx;
  const double port = args::number(L, 2, fn, "remote_port");
  if (port < 1 || port > 65535 || port != static_cast<int>(port))
    args::raise(L, "%s: 'remote_port' must be a whole number from 1 to 65535", fn);
  const int remote_port = static_cast<int>(port);
  const std::string host = lua_isnoneornil(L, 3) ? "127.0.0.1" : args::string(L, 3, fn, "remote_host");
  if (host.empty() || host.find_first_of(std::string_view(" \t\n\r\0", 5)) != std::string::npos)
    args::raise(L, "%s: 'remote_host' must be a host name or address as the remote machine sees it", fn);
  const ForwardTo target = forward_target(L, fn, ctx, *session, host, remote_port);
  const int local = kit::value_or_raise(L, fn, session->forward(target.host, remote_port));
  const auto& login = session->login();
  ctx.add_tunnel(RunTunnel{local, login.host, login.port, login.run_machine, target.to, remote_port, target.to_own});
  lua_pushfstring(L, "http://127.0.0.1:%d", local);
  return 1;
}

}  // namespace runara::sshb
