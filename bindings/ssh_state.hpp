// What the `ssh` binding keeps per run: the sessions scripts opened, the commands running on them,
// their transfers and forwards, and the host keys pinned during the run. Shared by the binding's
// files (ssh_binding.cpp: connect/close/teardown, ssh_process.cpp: exec/spawn and output,
// ssh_process_object.cpp: spawn's process objects, ssh_files.cpp:
// upload/download/forward, ssh_login.cpp: keys and host keys); not a public header.
//
// Contract. Threading: the run's loop thread (Lua and loop callbacks alike). Ownership: SshRun
// owns every SessionBox (a script's session userdata holds a weak_ptr, so a closed or torn-down
// session is simply gone for it); a box owns its session and everything riding on it, and frees
// those before the session. Processes are shared with their Lua userdata, which may outlive the
// box (then `box` is null). Reaches the run only through the public Context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <lua.hpp>

#include "runara/primitive.hpp"
#include "ssh/port_forward.hpp"
#include "ssh/sftp_transfer.hpp"
#include "ssh/command_target.hpp"
#include "ssh/exec.hpp"
#include "ssh/session.hpp"

namespace runara::sshb {

struct SessionBox;

// Bytes held on the script's behalf, counted against --max-memory in 64 KiB steps.
class MemoryHold {
 public:
  explicit MemoryHold(Context& ctx) : ctx_(&ctx) {}
  ~MemoryHold() { reset(); }
  MemoryHold(const MemoryHold&) = delete;
  MemoryHold& operator=(const MemoryHold&) = delete;
  std::string grow(std::size_t bytes, std::string_view what);  // "" or the refusal
  void shrink(std::size_t bytes);
  void reset();

 private:
  Context* ctx_;
  std::size_t used_ = 0, reserved_ = 0;
};

// What a line kept in spawn's :lines() backlog costs in memory: its std::string (in the deque)
// and, when it does not fit inside that, its heap block with the allocator's own overhead.
// Counting only the bytes let a flood of empty lines (0 bytes each, 32 in memory) pass the cap.
inline std::size_t queued_line_cost(const std::string& line) {
  constexpr std::size_t kMallocOverhead = 16;  // glibc: an 8-byte header, blocks rounded to 16
  static const std::size_t kInline = std::string().capacity();
  return sizeof(std::string) + (line.capacity() > kInline ? line.capacity() + 1 + kMallocOverhead : 0);
}

// One remote command started by exec or spawn.
struct Proc {
  explicit Proc(Context& ctx) : memory(ctx) {}
  SessionBox* box = nullptr;  // null once the session is gone
  std::uint64_t id = 0;
  std::string label;  // the command's start, for messages (redacted when shown)
  bool spawned = false, quiet = false;
  std::unique_ptr<ssh::SshExec> exec;
  bool done = false;
  ssh::ExecResult result;
  std::string memory_error;  // output went past --max-memory: the command was killed
  std::size_t counted[2] = {0, 0};  // tail bytes counted per stream (stdout, stderr)
  std::deque<std::string> lines;    // spawn: stdout lines not yet taken by :lines()
  std::size_t queued_bytes = 0, dropped_lines = 0;  // queued_bytes: their queued_line_cost, held in `memory`
  enum class Waiting { none, line, exit } waiting = Waiting::none;
  WaitId waiter = 0;
  std::function<void()> on_done;  // exec: ends the waiting s:exec call (check, errors)
  MemoryHold memory;

  // The oldest line of the backlog, its cost given back.
  std::string take_line() {
    const std::size_t cost = queued_line_cost(lines.front());
    std::string line = std::move(lines.front());
    lines.pop_front();
    queued_bytes -= cost;
    memory.shrink(cost);
    return line;
  }
};

// The per-machine log file ssh/<name>.log in the output folder; lines are redacted.
class LogFile {
 public:
  ~LogFile();
  void open(Context& ctx, const std::string& name);  // errors are logged once, not raised
  void line(Context& ctx, std::string_view text);
  void flush();

 private:
  int fd_ = -1;
  std::string buffer_;
};

struct SessionBox {
  explicit SessionBox(Context& c) : ctx(&c) {}
  ~SessionBox();
  Context* ctx;
  std::string name;  // the machine's name or the host: terminal prefix and log file name
  std::string host;  // the address connected to
  int port = 22;
  std::string user;
  bool run_machine = false;
  std::string host_key_error;  // why the host key was refused, for the connect error
  std::unique_ptr<ssh::SshSession> session;
  std::shared_ptr<ssh::SshCommandTarget> target;
  std::map<std::uint64_t, std::shared_ptr<Proc>> procs;  // running
  std::uint64_t next_proc = 1;
  struct Transfer {
    std::unique_ptr<ssh::SftpTransfer> transfer;
    WaitId wait = 0;
  };
  std::map<std::uint64_t, Transfer> transfers;
  std::uint64_t next_transfer = 1;
  std::vector<std::unique_ptr<ssh::PortForward>> forwards;
  LogFile log;
  bool closing = false;
  std::vector<std::function<void()>> on_closed;  // close() callers, and teardown
  std::size_t kills_pending = 0;

  bool usable() const { return session && session->ready() && !closing; }
  std::string where() const { return name + " (" + user + "@" + host + ":" + std::to_string(port) + ")"; }
  void proc_ended(Proc& proc);  // from a Proc's done: bookkeeping and the close sequence
  void close(std::function<void()> done);  // kill processes, stop transfers/forwards, disconnect
  void drop_forwards();  // closes the tunnels; their ports leave the run's reachable set
 private:
  void disconnect();
};

struct SshRun {
  explicit SshRun(Context& c) : ctx(&c) {}
  Context* ctx;
  std::list<std::shared_ptr<SessionBox>> sessions;
  std::map<std::string, std::string> pinned;  // "address:port" -> fingerprint, for the run
  void forget(SessionBox* box);
};

// ssh_login.cpp: where and how to log in, decided before anything is sent.
struct LoginPlan {
  std::string name, host, user = "root";
  int port = 22;
  const RunMachine* machine = nullptr;
  ssh::SessionOptions options;
};
// Reads ssh.connect's target (index 1) and options (index 2); raises on bad input.
LoginPlan plan_login(lua_State* L, Context& ctx);
// The host-key decision for one session: pins for run machines, known_hosts for others.
std::function<bool(const ssh::HostKey&)> host_key_policy(SshRun& run, SessionBox& box, const RunMachine* machine);

// ssh_process.cpp / ssh_files.cpp: the session methods.
int session_exec(lua_State* L);
int session_spawn(lua_State* L);
int session_upload(lua_State* L);
int session_download(lua_State* L);
int session_forward(lua_State* L);
void open_process_metatable(lua_State* L, Context& ctx);
// ssh_process.cpp / ssh_process_object.cpp: what they share.
void push_exec_result(lua_State* L, const Proc& p);  // the table exec and :wait() return
void push_process(lua_State* L, std::shared_ptr<Proc> proc);  // a process object for spawn

// ssh_binding.cpp: the session behind the userdata at `index` (raises if closed or not one).
std::shared_ptr<SessionBox> check_session(lua_State* L, int index, const char* fn);
SshRun& run_of(lua_State* L);  // from the function's first upvalue

}  // namespace runara::sshb
