// What namespaces do not separate, tried from a simulated machine under `runara --sim`: your
// kernel keyring (a key this test adds to its user keyring must not be read from the box), the
// kernel log, new user namespaces, /proc/sys, SysV IPC, perf events, userfaultfd, bpf, inotify
// instances (counted per user of this computer), the clock. See sim/box_seccomp.hpp and
// docs/sim.md. Each probe prints NAME=yes when it got through, NAME=no when it did not.
// (test_sim_isolation.cpp tries this computer's files, services and processes; the box's sizes
// and counts are test_sim_box_limits.cpp's.)
#include <catch2/catch.hpp>

#include <linux/keyctl.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>

#include "child_process.hpp"
#include "test_text.hpp"

using namespace runara::test;

namespace {

// A key in this process's user keyring (the kernel's, for this user), removed at the end.
class UserKey {
 public:
  UserKey(const std::string& description, const std::string& payload) {
    serial_ = ::syscall(SYS_add_key, "user", description.c_str(), payload.data(), payload.size(),
                        KEY_SPEC_USER_KEYRING);
    ring_ = ::syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0);
  }
  ~UserKey() {
    if (serial_ > 0) ::syscall(SYS_keyctl, KEYCTL_INVALIDATE, serial_);
  }
  long serial() const { return serial_; }
  long ring() const { return ring_; }

 private:
  long serial_ = -1, ring_ = -1;
};

std::string n(long v) { return std::to_string(v); }

// The attacker's way in: link the user keyring into the box's session keyring (which possesses
// it then), and read the key.
std::string keyring_read(const UserKey& key) {
  const std::string kc = n(SYS_keyctl);
  return "perl -e '$b = chr(0) x 256; $n = syscall(" + kc + ", " + n(KEYCTL_READ) + ", " + n(key.serial()) +
         ", $b, 256); if ($n < 0) { syscall(" + kc + ", " + n(KEYCTL_LINK) + ", " + n(key.ring()) + ", " +
         n(KEY_SPEC_SESSION_KEYRING) + "); $n = syscall(" + kc + ", " + n(KEYCTL_READ) + ", " + n(key.serial()) +
         ", $b, 256) } print substr($b, 0, $n) if $n > 0' | grep -q runara-box-key-payload";
}

// A perl one-liner that succeeds when syscall(ARGS) does not fail.
std::string call(long nr, const std::string& args) {
  return "perl -e 'exit(syscall(" + n(nr) + (args.empty() ? "" : ", " + args) + ") < 0 ? 1 : 0)'";
}

// perf_event_attr (PERF_ATTR_SIZE_VER0, 64 bytes): a software CPU clock on this process,
// user space only, which perf_event_paranoid 2 still allows.
const char* kPerfAttr = "pack(\"LLQQQQQLLQ\", 1, 64, 0, 0, 0, 0, 96, 0, 0, 0)";

// A global sysctl written with the value it has: harmless, and refused unless the box's user owns it.
const char* kGlobalSysctlWrite = "v=$(cat /proc/sys/kernel/printk_ratelimit) && echo $v > /proc/sys/kernel/printk_ratelimit";

std::string probes(const UserKey& key, int shm_id) {
  std::string s = R"(
local d = droplet.create{ name = "box", size = "gpu-mi300x1-192gb", image = "gpu-amd-base", region = "atl1" }
local s = ssh.connect(d, { timeout = 30 })
local function probe(name, command)
  local r = s:exec("(" .. command .. ") >/dev/null 2>&1 && echo " .. name .. "=yes || echo " .. name .. "=no", { quiet = true })
  print(r.stdout)
end
)";
  auto add = [&](const std::string& name, const std::string& command) {
    s += "probe(\"" + name + "\", [==[" + command + "]==])\n";
  };
  add("keyring_read", keyring_read(key));
  add("keyctl", call(SYS_keyctl, n(KEYCTL_GET_KEYRING_ID) + ", " + n(KEY_SPEC_SESSION_KEYRING) + ", 0"));
  add("proc_keys", "grep -q . /proc/keys");
  add("proc_key_users", "grep -q . /proc/key-users");
  add("dmesg", "dmesg");
  add("syslog", call(SYS_syslog, "10, 0, 0"));
  add("new_userns", "unshare -U true");
  add("proc_sys_write", kGlobalSysctlWrite);
  add("host_sysv_shm", "perl -e 'exit(defined(shmctl(" + std::to_string(shm_id) + ", 2, $b)) ? 0 : 1)'");  // IPC_STAT
  add("perf_event", std::string("perl -e '$a = ") + kPerfAttr + "; exit(syscall(" + n(SYS_perf_event_open) +
                        ", $a, 0, -1, -1, 0) < 0 ? 1 : 0)'");
  add("userfaultfd", call(SYS_userfaultfd, "1"));  // UFFD_USER_MODE_ONLY: allowed unprivileged
  add("bpf", "perl -e '$a = chr(0) x 72; exit(syscall(" + n(SYS_bpf) + ", 0, $a, 72) < 0 ? 1 : 0)'");
  add("inotify", call(SYS_inotify_init1, "0"));
  add("set_clock", "date -s @0");
  add("own_files", "echo hi > $HOME/x && cat $HOME/x");  // the box still works
  return s;
}

}  // namespace

TEST_CASE("sim: a simulated machine gets none of what namespaces share: keyrings, kernel log, userns, perf, inotify",
          "[sim][isolation]") {
  const std::string dir = temp_dir("sim-box-kernel");
  UserKey key("runara-box-test-" + std::to_string(::getpid()), "runara-box-key-payload");
  REQUIRE(key.serial() > 0);
  const int shm_id = ::shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
  REQUIRE(shm_id >= 0);
  const auto r = run_runara({"--sim", "--out", dir + "/out", "-e", probes(key, shm_id)}, 90);
  ::shmctl(shm_id, IPC_RMID, nullptr);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* got : {"keyring_read=no", "keyctl=no", "proc_keys=no", "proc_key_users=no", "dmesg=no", "syslog=no",
                          "new_userns=no", "proc_sys_write=no", "host_sysv_shm=no", "perf_event=no", "userfaultfd=no",
                          "bpf=no", "inotify=no", "set_clock=no", "own_files=yes"})
    CHECK(contains(r.out, got));
  CHECK_FALSE(contains(r.out + r.err, "runara-box-key-payload"));
}

// Run by root with a $TMPDIR nobody cannot walk through, the boxes stay root's (sim/box_user.hpp):
// runara says their process cap does not hold, and /proc/sys, whose files root owns, stays
// read-only.
TEST_CASE("sim: a box that stays root's says so and still cannot write a global sysctl", "[sim][isolation]") {
  if (::geteuid() != 0) return;
  const std::string dir = temp_dir("sim-box-root");  // 0700: nobody cannot walk through it
  const std::string script =
      "local d = droplet.create{ name = 'box', size = 'gpu-mi300x1-192gb', image = 'gpu-amd-base', region = 'atl1' }\n"
      "local s = ssh.connect(d, { timeout = 30 })\n"
      "print(s:exec([==[(" + std::string(kGlobalSysctlWrite) +
      ") >/dev/null 2>&1 && echo proc_sys_write=yes || echo proc_sys_write=no]==], { quiet = true }).stdout)\n";
  const auto r = run_runara({"--sim", "--out", dir + "/out", "-e", script}, 90, {{"TMPDIR", dir}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "proc_sys_write=no"));
  CHECK(contains(r.err, "so the simulated machines run as root: their 512-process cap does not hold"));
}
