// s:upload, s:download (SFTP, files or whole folders, modes kept, progress for large files) and
// s:forward (a 127.0.0.1 listener tunnelled through the session, only to the machine itself, the
// run's droplets or granted hosts). Local paths obey the sandbox:
// an upload reads only what runara.read_file may read (the script's folder, --allow-read; never
// an output folder, not even one nested in a granted folder), a download writes only below the
// run's output folder, reached from its descriptor without following a symlink, with the run's
// secrets masked in what it writes (a machine the script controls can hold their values).
#include <fcntl.h>
#include <unistd.h>
#include <uv.h>

#include <filesystem>

#include "script/args.hpp"
#include "guards/permissions.hpp"
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

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

int run_transfer(lua_State* L, const char* fn, const std::shared_ptr<SessionBox>& box, ssh::TransferOptions o) {
  Context& ctx = *box->ctx;
  const std::uint64_t id = box->next_transfer++;
  auto last = std::make_shared<double>(0);
  const std::string name = box->name;
  Context* c = &ctx;
  o.progress = [c, last, name, fn](const std::string& path, std::uint64_t done, std::uint64_t size, std::uint64_t) {
    const double now = static_cast<double>(uv_hrtime()) / 1e9;
    if (size < (64u << 20) || now - *last < 1) return;  // only large files, once a second
    *last = now;
    c->progress(std::string(fn) + " " + name + ": " + path + " " + mib(done) + " / " + mib(size));
  };
  SessionBox* raw = box.get();
  const bool up = o.direction == ssh::TransferOptions::Direction::Upload;
  // The transfer's two blocks (a download's twice a block each) are filled at once: held from
  // --max-memory for as long as the transfer lives (transfers on other sessions run in parallel).
  const std::size_t buffers = (up ? 2 : 4) * o.block_bytes;
  if (std::string refused = ctx.reserve_memory(buffers, "an SFTP transfer"); !refused.empty())
    args::raise(L, "%s: %s", fn, refused.c_str());
  auto held = std::shared_ptr<void>(nullptr, [c, buffers](void*) { c->release_memory(buffers); });
  const WaitId wait = ctx.suspend(L, [raw, id] { raw->transfers.erase(id); });
  const std::string where = box->where();
  std::string local = o.local, remote = o.remote;
  try {
    auto t = std::make_unique<ssh::SftpTransfer>(*box->session, std::move(o), [=, held = held](const ssh::TransferResult& r) {
      auto node = raw->transfers.extract(id);  // freed at the end of this call: its last act
      const std::string line = std::string(fn) + " " + (up ? local + " -> " + remote : remote + " -> " + local) + ": ";
      if (!r.error.empty()) {
        raw->log.line(*c, "# " + line + r.error);
        return c->fail(wait, std::string(fn) + " on " + where + ": " + r.error);
      }
      raw->log.line(*c, "# " + line + std::to_string(r.files) + " file(s), " + std::to_string(r.bytes) + " bytes in " +
                            std::to_string(r.seconds).substr(0, 6) + " s");
      c->resume(wait, [r](lua_State* co) {
        lua_createtable(co, 0, 3);
        lua_pushnumber(co, static_cast<lua_Number>(r.bytes));
        lua_setfield(co, -2, "bytes");
        lua_pushinteger(co, r.files);
        lua_setfield(co, -2, "files");
        lua_pushnumber(co, r.seconds);
        lua_setfield(co, -2, "seconds");
        return 1;
      });
    });
    box->transfers[id] = SessionBox::Transfer{std::move(t), wait};
  } catch (const std::exception& e) {
    ctx.fail(wait, std::string(fn) + ": " + e.what());
  }
  return ctx.yield(L);
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
  auto box = check_session(L, 1, fn);
  const std::string local = args::string(L, 2, fn, "local");
  const std::string remote = remote_path(L, 3, fn);
  std::string error;
  const std::string real = box->ctx->readable_path(local, error);
  if (real.empty()) args::raise(L, "%s: %s", fn, error.c_str());
  if (const std::string inside = output_folder_inside(real); !inside.empty())
    args::raise(L, "%s: '%s' holds a runara output folder ('%s'), which scripts cannot read (runara redacts secrets "
                "from it; sending it away would reveal them); upload a folder without it", fn, local.c_str(), inside.c_str());
  ssh::TransferOptions o;
  o.direction = ssh::TransferOptions::Direction::Upload;
  o.local = real;
  o.remote = remote;
  return run_transfer(L, fn, box, std::move(o));
}

int session_download(lua_State* L) {
  const char* fn = "s:download";
  auto box = check_session(L, 1, fn);
  const std::string remote = remote_path(L, 2, fn);
  const std::string local = args::string(L, 3, fn, "local");
  std::string error;
  const std::string relative = normalize_output_path(local, error);
  if (relative.empty()) args::raise(L, "%s: local path: %s (downloads land in the run's output folder)", fn, error.c_str());
  if (starts_with_reserved_name(relative))
    args::raise(L, "%s: '%s' is written by runara itself; choose another name", fn, local.c_str());
  // The parent folders are made from the output folder's descriptor, refusing any symlink on
  // the way; the engine then writes the destination without following a link in its last part.
  const int dir = box->ctx->open_out_dir(error);
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
  o.local = box->ctx->out_dir() + "/" + relative;
  o.remote = remote;
  o.mask = box->ctx->secret_mask();  // the output folder holds no secret, whatever the machine wrote
  return run_transfer(L, fn, box, std::move(o));
}

int session_forward(lua_State* L) {
  const char* fn = "s:forward";
  auto box = check_session(L, 1, fn);
  Context& ctx = *box->ctx;
  const double port = args::number(L, 2, fn, "remote_port");
  if (port < 1 || port > 65535 || port != static_cast<int>(port))
    args::raise(L, "%s: 'remote_port' must be a whole number from 1 to 65535", fn);
  const int remote_port = static_cast<int>(port);
  std::string host = lua_isnoneornil(L, 3) ? "127.0.0.1" : args::string(L, 3, fn, "remote_host");
  if (host.empty() || host.find_first_of(std::string_view(" \t\n\r\0", 5)) != std::string::npos)
    args::raise(L, "%s: 'remote_host' must be a host name or address as the remote machine sees it", fn);
  const RunMachine* machine = box->run_machine ? ctx.machine(box->host) : nullptr;
  if (box->run_machine && !machine)
    args::raise(L, "%s: %s was destroyed: it is no longer the run's machine, and no tunnel leads through it", fn,
                box->where().c_str());
  // Where the tunnel may lead is judged by address, before the machine is asked for anything:
  // through a granted host it would otherwise reach that host's whole network from here.
  std::vector<std::string> own{box->host};
  if (machine) own.insert(own.end(), {machine->address, machine->private_address});
  std::string why;
  const auto target = run_target_policy(ctx, fn)->tunnel_target(host, remote_port, own, box->where(), why);
  if (!target) args::raise(L, "%s", why.c_str());
  host = target->connect_host;
  // A machine whose loopback has an address of its own (its route's: one sharing this
  // computer's loopback with others, as --sim-unisolated's do): that is its "own loopback", and
  // so is every other spelling of itself (its private address does not exist here: on this
  // computer it is the LAN's).
  if (machine && !machine->route.loopback.empty() && target->to.empty()) host = machine->route.loopback;
  try {
    auto forward = std::make_unique<ssh::PortForward>(ctx.loop(), *box->session, host, remote_port);
    const int local = forward->port();
    box->forwards.push_back(std::move(forward));
    ctx.add_tunnel(RunTunnel{local, box->host, box->port, box->run_machine, target->to, remote_port, target->to_own});
    ctx.log("ssh: forwarding 127.0.0.1:" + std::to_string(local) + " to " + host + ":" + std::to_string(remote_port) +
            " on " + box->where());
    lua_pushfstring(L, "http://127.0.0.1:%d", local);
    return 1;
  } catch (const std::exception& e) {
    args::raise(L, "%s: %s", fn, e.what());
  }
}

}  // namespace runara::sshb
