// What the `ssh` binding's files share: the Lua objects (a session holds its MachineSession
// weakly, a spawned process shares its RemoteProcess) and the functions each file gives the
// others. The work is the engine's (runtime/ssh/run_sessions.hpp and what it uses): this is only
// how Lua reaches it. Not a public header.
//
// Contract: Lua thread only. SshRun is the primitive's per-run state, the methods' and
// ssh.connect's upvalue; it outlives every Lua call into the binding.
#pragma once

#include <memory>

#include <lua.hpp>

#include "kit/userdata.hpp"
#include "runara/primitive.hpp"
#include "ssh/run_sessions.hpp"

namespace runara::sshb {

struct SshRun {
  SshRun(Context& c, ssh::RunHooks hooks) : ctx(&c), sessions(c.loop(), std::move(hooks)) {}
  Context* ctx;
  ssh::RunSessions sessions;
};

struct SessionRef {
  std::weak_ptr<ssh::MachineSession> session;  // gone once closed (by the script or teardown)
};
using SessionObject = kit::Userdata<SessionRef>;

struct ProcessRef {
  std::shared_ptr<ssh::RemoteProcess> process;
};
using ProcessObject = kit::Userdata<ProcessRef>;

SshRun& run_of(lua_State* L);  // from the function's first upvalue
// The open session behind the object at `index`; raises if closed, lost, or not a session.
std::shared_ptr<ssh::MachineSession> check_session(lua_State* L, int index, const char* fn);

// ssh_login.cpp: ssh.connect's target (index 1) and options (index 2), checked; raises on bad input.
ssh::ConnectPlan plan_login(lua_State* L, Context& ctx);

// ssh_process.cpp / ssh_files.cpp: the session methods.
int session_exec(lua_State* L);
int session_spawn(lua_State* L);
int session_upload(lua_State* L);
int session_download(lua_State* L);
int session_forward(lua_State* L);
// ssh_process.cpp / ssh_process_object.cpp
void push_exec_result(lua_State* L, const ssh::RemoteProcess& p);  // the table exec and :wait() return
void define_process_object(lua_State* L, Context& ctx);
void push_process(lua_State* L, std::shared_ptr<ssh::RemoteProcess> process);  // spawn's process object

}  // namespace runara::sshb
