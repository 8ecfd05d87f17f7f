#include "sim/sim_machine.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "cloud/ssh_keypair.hpp"
#include "sim/box_user.hpp"
#include "sim/sim_isolation.hpp"
#include "sim/sim_machine_init.hpp"
#include "sim/sim_sweeper.hpp"

namespace runara::sim {

namespace {

void write_private(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) throw std::runtime_error("simulated machine: cannot create " + path + ": " + std::strerror(errno));
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) throw std::runtime_error("simulated machine: cannot write " + path);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::pair<std::string, int> simulated_gpu(const std::string& slug) {
  // gpu-<model>x<count>-<memory>, e.g. gpu-h100x8-640gb, gpu-mi300x1-192gb
  if (slug.rfind("gpu-", 0) != 0) return {"none", 0};
  const size_t dash = slug.find('-', 4);
  const size_t x = dash == std::string::npos ? dash : slug.rfind('x', dash);
  if (x == std::string::npos || x < 4) return {"none", 0};
  std::string model = slug.substr(4, x - 4);
  if (model == "mi300") model = "mi300x";  // "gpu-mi300x8-…": MI300X, times 8
  const int count = std::atoi(slug.substr(x + 1, dash - x - 1).c_str());
  if ((model != "mi300x" && model != "h100") || count < 1) return {"none", 0};
  return {model, count};
}

int free_port_on(const std::string& address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  socklen_t len = sizeof a;
  const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  if (fd >= 0) ::close(fd);
  return ok ? ntohs(a.sin_port) : 0;
}

SimMachine::SimMachine(SimMachineSpec spec) : spec_(std::move(spec)) {
  port_ = free_port_on(spec_.address);
  if (port_ == 0) throw std::runtime_error("simulated machine: cannot bind a port on " + spec_.address);
  for (const char* sub : {"", "/home", "/state"})
    if (::mkdir((spec_.dir + sub).c_str(), 0700) != 0)
      throw std::runtime_error("simulated machine: cannot create " + spec_.dir + sub + ": " + std::strerror(errno));
  if (spec_.isolated) write_isolated_etc(layout());
  write_config();
  // Before the box exists: nothing in this folder is the box's doing yet.
  if (spec_.isolated) hand_to_box_user(spec_.dir, true);
  spawn_sshd();
}

SimMachine::~SimMachine() {
  kill_marked_processes("RUNARA_SIM_STATE=" + spec_.dir + "/state", spec_.dir);
  if (channel_ >= 0) ::close(channel_);  // the machine's init ends, and bubblewrap with it
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

std::vector<std::string> SimMachine::environment() const {
  const auto [gpu, count] = simulated_gpu(spec_.size_slug);
  char scale[32];
  std::snprintf(scale, sizeof scale, "%g", spec_.time_scale);
  // Only the vendor's own tools: a script that asks an H100 for amd-smi must find none, as on
  // the real machine, so the stdlib's vendor choice is rehearsed and not just assumed.
  std::string tools = spec_.shims_dir + "/bin";
  if (gpu == "mi300x") tools = spec_.shims_dir + "/amd:" + tools;
  if (gpu == "h100") tools = spec_.shims_dir + "/nvidia:" + tools;
  return {"PATH=" + tools + ":/usr/local/bin:/usr/bin:/bin",
          "HOME=" + spec_.dir + "/home",
          "RUNARA_SIM=1",
          "RUNARA_SIM_RUNARA=" + spec_.runara_executable,
          "RUNARA_SIM_STATE=" + spec_.dir + "/state",
          "RUNARA_SIM_DATA=" + spec_.shims_dir + "/data",
          "RUNARA_SIM_GPU=" + gpu,
          "RUNARA_SIM_GPU_COUNT=" + std::to_string(count),
          "RUNARA_SIM_SIZE=" + spec_.size_slug,
          "RUNARA_SIM_IP=" + spec_.address,
          std::string("RUNARA_SIM_TIME_SCALE=") + scale,
          std::string("RUNARA_SIM_ISOLATED=") + (spec_.isolated ? "1" : "0"),
          "RUNARA_SIM_FAULTS=" + spec_.faults,
          "RUNARA_SIM_FABRIC=" + spec_.fabric_dir,
          "RUNARA_SIM_PRIVATE_IP=" + spec_.private_ip,
          "RUNARA_SIM_VPC=" + spec_.vpc_uuid,
          "RUNARA_SIM_JOIN_TIMEOUT_S=" + spec_.join_timeout_s,
          spec_.cloud_entry};
}

void SimMachine::write_config() {
  const std::string& d = spec_.dir;
  auto host_key = make_ed25519_keypair("runara-sim-host");
  if (!host_key) throw std::runtime_error(host_key.error());
  write_private(d + "/host_key", host_key->private_openssh, 0600);
  std::string keys;
  for (const auto& k : spec_.public_keys) keys += k + "\n";
  write_private(d + "/authorized_keys", keys, 0600);
  std::ostringstream c;
  c << "Port " << port_ << "\nListenAddress " << spec_.address << "\nHostKey " << d << "/host_key\n"
    << "AuthorizedKeysFile " << d << "/authorized_keys\nPidFile " << d << "/state/sshd.pid\n"
    << "StrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
    << "KbdInteractiveAuthentication no\nAllowTcpForwarding yes\nAllowAgentForwarding no\nX11Forwarding no\n"
    << "PermitUserEnvironment no\nSubsystem sftp internal-sftp -d " << d << "/home\n"
    << "MaxSessions 200\nMaxStartups 200\nLogLevel ERROR\n";
  c << "SetEnv";
  // sshd builds each session's environment afresh: SetEnv is how the shims' variables (and the
  // process marker the sweeper looks for) reach every command.
  for (const auto& e : environment()) c << ' ' << e;
  c << '\n';
  write_private(d + "/sshd_config", c.str(), 0600);
}

IsolationLayout SimMachine::layout() const {
  return {spec_.dir, spec_.shims_dir, spec_.runara_executable, "droplet", spec_.fabric_dir, spec_.limits};
}

std::vector<std::string> SimMachine::command_line() const {
  std::vector<std::string> sshd{"/usr/sbin/sshd", "-D", "-e", "-f", spec_.dir + "/sshd_config"};
  if (!spec_.isolated) return sshd;
  const std::vector<std::string> bwrap = bwrap_arguments(layout());
  std::vector<std::string> args;
  if (const auto user = box_user())
    args = {spec_.runara_executable, "__sim_box_user", std::to_string(user->uid), std::to_string(user->gid)};
  args.insert(args.end(), bwrap.begin(), bwrap.end());
  args.insert(args.end(), {spec_.runara_executable, "__sim_machine_init", box_limits_argument(spec_.limits)});
  args.insert(args.end(), sshd.begin(), sshd.end());
  return args;
}

void SimMachine::spawn_sshd() {
  int pair[2] = {-1, -1};
  if (spec_.isolated) {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      throw std::runtime_error(std::string("simulated machine: socketpair: ") + std::strerror(errno));
    channel_ = pair[0];
  } else {
    ::mkdir("/run/sshd", 0755);  // sshd's privilege separation folder (as root); a container may lack it
  }
  std::vector<std::string> args = command_line();
  std::vector<std::string> env = environment();
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  const std::string log = spec_.dir + "/sshd.log";
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (pair[1] >= 0) posix_spawn_file_actions_adddup2(&actions, pair[1], kMachineInitFd);  // dup2 clears CLOEXEC
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  // A session of its own: a Ctrl-C at the terminal reaches runara, whose teardown then ends the
  // machine's commands in order, not sshd at once.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const int rc = posix_spawn(&pid_, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (pair[1] >= 0) ::close(pair[1]);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("simulated machine: cannot start " + args[0] + ": " + std::strerror(rc) +
                             (spec_.isolated ? " (install bubblewrap)" : " (install openssh-server)"));
  }
  // sshd checks its configuration before it forks nothing: a bad one exits at once. Then wait for
  // it to listen, boxed (behind bubblewrap and the machine's init) or not: on a loaded machine
  // (a sanitizer build under CI) a client connecting right away was refused.
  ::usleep(20000);
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    throw std::runtime_error("simulated machine: sshd exited at start: " + read_text(log));
  }
  wait_until_listening();
}

// Boxed, the sshd listens inside the machine: asked through the machine's own sockets.
void SimMachine::wait_until_listening() {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port_));
  ::inet_pton(AF_INET, spec_.address.c_str(), &a.sin_addr);
  for (int attempt = 0; attempt < 200; ++attempt) {
    std::string error;
    const int fd = open_socket(error);
    if (fd < 0) break;
    const bool up = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (up) return;
    ::usleep(10000);
  }
  // The destructor will not run for a machine that failed to start: end its box here.
  ::close(channel_);
  channel_ = -1;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  throw std::runtime_error("simulated machine: its sshd did not start: " + read_text(spec_.dir + "/sshd.log"));
}

namespace {

int receive_fd(int channel) {
  char byte;
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (::recvmsg(channel, &msg, MSG_CMSG_CLOEXEC) != 1) return -1;
  const cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
    return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  // Only a TCP socket is of use (and safe to connect): anything else is refused.
  int type = 0, domain = 0;
  socklen_t len = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM ||
      ::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &(len = sizeof domain)) != 0 || domain != AF_INET) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int SimMachine::open_socket(std::string& error) {
  if (!spec_.isolated) return ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::lock_guard lock(channel_mu_);
  const char ask = 'S';
  pollfd p{channel_, POLLIN, 0};
  // Waited for at most 2 s: the machine's own commands could stop its init (same user inside).
  if (::send(channel_, &ask, 1, MSG_NOSIGNAL) != 1 || ::poll(&p, 1, 2000) != 1) {
    error = "the simulated machine " + spec_.address + " does not answer (it was stopped or is gone)";
    return -1;
  }
  const int fd = receive_fd(channel_);
  if (fd < 0) error = "the simulated machine " + spec_.address + " answered with no usable socket";
  return fd;
}

}  // namespace runara::sim
