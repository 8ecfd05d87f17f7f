#include "sim/sim_isolation.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace runara::sim {

namespace {

constexpr const char* kBwrap = "/usr/bin/bwrap";

// Files programs read at start (the loader, name lookups, awk through alternatives). Nothing
// that holds a secret: /etc/shadow, /etc/ssh and the user's configuration stay outside.
constexpr const char* kEtcFiles[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                                     "/etc/nsswitch.conf", "/etc/localtime", "/etc/os-release", "/etc/debian_version",
                                     "/etc/mime.types", "/etc/protocols", "/etc/services"};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("simulated machine: cannot write " + path);
}

bool exists(const char* path) {
  struct stat st {};
  return ::lstat(path, &st) == 0;
}

// /bin, /lib… are links into /usr on Debian 12 (merged /usr); folders of their own elsewhere.
void add_root_folder(std::vector<std::string>& a, const char* path) {
  struct stat st {};
  if (::lstat(path, &st) != 0) return;
  if (S_ISLNK(st.st_mode)) {
    char target[256] = {};
    const ssize_t n = ::readlink(path, target, sizeof target - 1);
    if (n > 0) a.insert(a.end(), {"--symlink", std::string(target, static_cast<size_t>(n)), path});
  } else if (S_ISDIR(st.st_mode)) {
    a.insert(a.end(), {"--ro-bind", path, path});
  }
}

// /proc files that are this computer's whatever the namespace: every keyring the kernel user may
// view (ids and descriptions), the kernel log, every CPU's timers with the host's pids and names,
// the magic SysRq keys.
constexpr const char* kMaskedProc[] = {"/proc/keys",        "/proc/key-users",  "/proc/kmsg",
                                       "/proc/kcore",       "/proc/timer_list", "/proc/sched_debug",
                                       "/proc/sysrq-trigger"};

void add_tmpfs(std::vector<std::string>& a, std::uint64_t bytes, const std::string& path) {
  a.insert(a.end(), {"--size", std::to_string(bytes), "--tmpfs", path});
}

}  // namespace

void write_isolated_etc(const IsolationLayout& l) {
  const std::string etc = l.machine_dir + "/etc";
  if (::mkdir(etc.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::runtime_error("simulated machine: cannot create " + etc + ": " + std::strerror(errno));
  write_file(etc + "/passwd", std::string(kIsolatedUser) + ":x:1000:1000:runara simulated machine:" + l.machine_dir +
                                  "/home:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
  write_file(etc + "/group", std::string(kIsolatedUser) + ":x:1000:\nnogroup:x:65534:\n");
  write_file(etc + "/hosts", "127.0.0.1 localhost\n::1 localhost\n127.0.1.1 " + l.hostname + "\n");
}

namespace {

void add_etc(std::vector<std::string>& a, const std::string& machine_dir) {
  a.insert(a.end(), {"--dir", "/etc"});
  for (const char* f : {"passwd", "group", "hosts"})
    a.insert(a.end(), {"--ro-bind", machine_dir + "/etc/" + f, std::string("/etc/") + f});
  for (const char* f : kEtcFiles)
    if (exists(f)) a.insert(a.end(), {"--ro-bind", f, f});
}

// Every folder the box may write is a tmpfs of its own size: bubblewrap's are otherwise half of
// this computer's memory each, and the machine's folder is on this computer's disk. The rest,
// /dev and / included, is read-only.
void add_writable(std::vector<std::string>& a, const IsolationLayout& l) {
  a.insert(a.end(), {"--dev", "/dev"});
  add_tmpfs(a, l.limits.shm_bytes, "/dev/shm");
  add_tmpfs(a, l.limits.tmp_bytes, "/tmp");
  a.insert(a.end(), {"--remount-ro", "/dev", "--symlink", "../tmp", "/var/tmp", "--dir", "/run", "--ro-bind",
                     l.machine_dir, l.machine_dir});
  add_tmpfs(a, l.limits.home_bytes, l.machine_dir + "/home");
  add_tmpfs(a, l.limits.state_bytes, l.machine_dir + "/state");
}

}  // namespace

// No --die-with-parent: it ties the box to the thread that started it (the fake API's), not to
// runara. The box ends when runara's end of the machine's channel closes (runara exits or dies:
// the machine's init then exits, and with the pid namespace's first process every process in it).
std::vector<std::string> bwrap_arguments(const IsolationLayout& l) {
  std::vector<std::string> a{kBwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                             "--unshare-uts", "--unshare-cgroup-try", "--disable-userns", "--uid", "1000", "--gid",
                             "1000", "--hostname", l.hostname, "--new-session", "--cap-drop", "ALL",
                             "--ro-bind", "/usr", "/usr"};
  for (const char* p : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) add_root_folder(a, p);
  add_etc(a, l.machine_dir);
  a.insert(a.end(), {"--proc", "/proc"});
  for (const char* f : kMaskedProc)
    if (exists(f)) a.insert(a.end(), {"--ro-bind", "/dev/null", f});
  // Read-only: to the kernel, a box of root's (box_user.hpp) would own the global sysctls' files
  // and could write them without any capability.
  a.insert(a.end(), {"--ro-bind", "/proc/sys", "/proc/sys"});
  add_writable(a, l);
  a.insert(a.end(), {"--ro-bind", l.shims_dir, l.shims_dir, "--ro-bind", l.runara_executable, l.runara_executable});
  // The machine's VPC fabric (sim_fabric.hpp), shared with the other members of its VPC only. Its
  // firewall/ folder is runara's to write (it follows the fake API's firewalls): read-only here, or
  // a script's command could swap it for a link and have runara write, or delete, files of the
  // user's through it. Being a mount point, the box cannot rename or remove it either.
  if (!l.fabric_dir.empty())
    a.insert(a.end(), {"--bind", l.fabric_dir, l.fabric_dir, "--ro-bind", l.fabric_dir + "/firewall",
                       l.fabric_dir + "/firewall"});
  a.insert(a.end(), {"--remount-ro", "/", "--chdir", l.machine_dir + "/home", "--"});
  return a;
}

std::string isolation_problem() {
  if (::access(kBwrap, X_OK) != 0)
    return "simulated machines are isolated with bubblewrap, and /usr/bin/bwrap is missing: install it "
           "(apt-get install bubblewrap)";
  std::vector<std::string> args{kBwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--uid", "1000",
                                "--ro-bind", "/usr", "/usr"};
  for (const char* p : {"/bin", "/lib", "/lib32", "/lib64", "/libx32"}) add_root_folder(args, p);
  args.insert(args.end(), {"--", "/usr/bin/true"});
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  pid_t pid = -1;
  char* no_env[] = {nullptr};
  const int rc = ::posix_spawn(&pid, kBwrap, &actions, nullptr, argv.data(), no_env);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  std::string said;
  char buf[512];
  ssize_t n;
  while (rc == 0 && (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0 && said.size() < 4096) said.append(buf, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  if (rc != 0) return std::string("cannot run /usr/bin/bwrap: ") + std::strerror(rc);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  return "bubblewrap cannot create the namespaces a simulated machine runs in (" + said +
         "). Unprivileged user namespaces must be allowed: on Debian, sysctl kernel.unprivileged_userns_clone=1; "
         "with AppArmor, kernel.apparmor_restrict_unprivileged_userns=0; in a container, run it with user "
         "namespaces allowed (e.g. docker --security-opt seccomp=unconfined)";
}

}  // namespace runara::sim
