#include "sim/sim_machine.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
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
  write_config();
  spawn_sshd();
}

SimMachine::~SimMachine() {
  kill_marked_processes("RUNARA_SIM_STATE=" + spec_.dir + "/state", spec_.dir);
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
          "RUNARA_SIM_FAULTS=" + spec_.faults,
          spec_.cloud_entry};
}

void SimMachine::write_config() {
  const std::string& d = spec_.dir;
  write_private(d + "/host_key", make_ed25519_keypair("runara-sim-host").private_openssh, 0600);
  std::string keys;
  for (const auto& k : spec_.public_keys) keys += k + "\n";
  write_private(d + "/authorized_keys", keys, 0600);
  std::ostringstream c;
  c << "Port " << port_ << "\nListenAddress " << spec_.address << "\nHostKey " << d << "/host_key\n"
    << "AuthorizedKeysFile " << d << "/authorized_keys\nPidFile " << d << "/sshd.pid\n"
    << "StrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
    << "KbdInteractiveAuthentication no\nAllowTcpForwarding yes\nAllowAgentForwarding no\nX11Forwarding no\n"
    << "PermitUserEnvironment no\nSubsystem sftp internal-sftp -d " << d << "/home\n"
    << "MaxSessions 200\nMaxStartups 200\nLogLevel ERROR\n";
  if (!spec_.run_commands)
    c << "ForceCommand echo 'runara plan: commands are not run on simulated machines during a plan' >&2; exit 126\n";
  c << "SetEnv";
  // sshd builds each session's environment afresh: SetEnv is how the shims' variables (and the
  // process marker the sweeper looks for) reach every command.
  for (const auto& e : environment()) c << ' ' << e;
  c << '\n';
  write_private(d + "/sshd_config", c.str(), 0600);
}

void SimMachine::spawn_sshd() {
  ::mkdir("/run/sshd", 0755);  // sshd's privilege separation folder (as root); a container may lack it
  std::vector<std::string> args{"/usr/sbin/sshd", "-D", "-e", "-f", spec_.dir + "/sshd_config"};
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
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error(std::string("simulated machine: cannot start /usr/sbin/sshd: ") + std::strerror(rc) +
                             " (install openssh-server)");
  }
  // sshd checks its configuration before it forks nothing: a bad one exits at once.
  ::usleep(20000);
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    throw std::runtime_error("simulated machine: sshd exited at start: " + read_text(log));
  }
}

}  // namespace runara::sim
