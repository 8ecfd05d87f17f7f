#include "sshd_fixture.hpp"
#include "test_processes.hpp"

#include "child_process.hpp"
#include "exec_image.hpp"
#include "loopback_socket.hpp"
#include "test_text.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace runara::test {

namespace {

// True once something on the port answers with an SSH banner.
bool sends_banner(int port) {
  const int fd = connect_loopback(port);
  if (fd < 0) return false;
  pollfd p{fd, POLLIN, 0};
  char buf[8] = {};
  const bool ok = ::poll(&p, 1, 2000) == 1 && ::recv(fd, buf, 7, 0) == 7 && std::string(buf, 7) == "SSH-2.0";
  ::close(fd);
  return ok;
}

// Every process below `root` (sshd's connections set up sessions of their own, so a process
// group signal would miss them): collected before any is killed, while the tree is intact.
std::vector<pid_t> descendants(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = proc_file(entry.path().string() + "/stat");
    const auto close_paren = stat.rfind(") ");
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(close_paren + 2));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    children.emplace(ppid, static_cast<pid_t>(std::stol(name)));
  }
  std::vector<pid_t> found;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (auto [it, end] = children.equal_range(p); it != end; ++it) {
      found.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return found;
}

std::string current_user() {
  const passwd* pw = getpwuid(geteuid());
  return pw ? pw->pw_name : "root";
}

}  // namespace

std::string run_tool(const std::vector<std::string>& argv) {
  ChildProcess child(argv);
  child.close_stdin();
  const ChildResult r = child.wait(30);
  if (r.exit_code != 0) throw std::runtime_error(argv.front() + " failed: " + r.err);
  return r.out;
}

SshdFixture::SshdFixture(bool start_now) : dir_(temp_dir("sshd")), user_(current_user()), port_(unused_loopback_port()) {
  // sshd's privilege separation folder; a fresh container may not have it.
  ::mkdir("/run/sshd", 0755);
  user_key_path_ = dir_ + "/user_key";
  run_tool({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "runara-test", "-f", user_key_path_});
  run_tool({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "other", "-f", dir_ + "/other_key"});
  std::filesystem::copy_file(user_key_path_ + ".pub", dir_ + "/authorized_keys");
  make_host_key();
  // The sessions get a HOME of their own, so the user's dotfiles stay out of the tests: bash run
  // by sshd reads ~/.bashrc, and one here ran `pyenv rehash`, whose lock file, left behind when a
  // test killed a command's process group mid-rehash, made every later login wait 60 s.
  std::filesystem::create_directory(home());
  env_.push_back("HOME=" + home());
  write_config();
  if (start_now) start();
}

SshdFixture::~SshdFixture() {
  kill_now();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string SshdFixture::home() const { return dir_ + "/home"; }

void SshdFixture::set_env(const std::string& name, const std::string& value) {
  env_.push_back(name + "=" + value);
  write_config();
}

// sshd takes only the first SetEnv line: every variable goes on one.
void SshdFixture::write_config() {
  std::ofstream config(dir_ + "/sshd_config");
  config << "Port " << port_ << "\nListenAddress 127.0.0.1\nHostKey " << dir_ << "/host_key\n"
         << "AuthorizedKeysFile " << dir_ << "/authorized_keys\nPidFile " << dir_ << "/sshd.pid\n"
         << "StrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
         << "KbdInteractiveAuthentication no\nAllowTcpForwarding yes\nSubsystem sftp internal-sftp -d " << home()
         << "\n"
         // Tests open many sessions and channels at once.
         << "MaxSessions 200\nMaxStartups 200\nLogLevel ERROR\nSetEnv";
  for (const std::string& entry : env_) config << ' ' << entry;
  config << '\n';
}

void SshdFixture::make_host_key() {
  std::filesystem::remove(dir_ + "/host_key");
  std::filesystem::remove(dir_ + "/host_key.pub");
  run_tool({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir_ + "/host_key"});
  // "256 SHA256:... comment (ED25519)"
  const std::string line = run_tool({"/usr/bin/ssh-keygen", "-l", "-E", "sha256", "-f", dir_ + "/host_key.pub"});
  std::istringstream words(line);
  std::string bits;
  words >> bits >> host_fingerprint_;
}

void SshdFixture::replace_host_key() {
  const bool was_running = running();
  kill_now();
  make_host_key();
  if (was_running) start();
}

void SshdFixture::start() {
  if (running()) return;
  ExecImage image({"/usr/sbin/sshd", "-D", "-e", "-f", dir_ + "/sshd_config"}, {});
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  // A file, not a pipe: nobody has to drain it for sshd to go on.
  const std::string log = dir_ + "/sshd.log";
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  const int rc = posix_spawn(&pid_, image.path(), &actions, nullptr, image.argv(), image.envp());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error(std::string("cannot start sshd: ") + std::strerror(rc));
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!sends_banner(port_)) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("sshd exited at start: " + this->log());
    }
    if (std::chrono::steady_clock::now() > until) throw std::runtime_error("sshd did not answer in 10 s: " + this->log());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void SshdFixture::kill_now() {
  if (!running()) return;
  for (pid_t p : descendants(pid_)) ::kill(p, SIGKILL);
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void SshdFixture::freeze_connections() {
  if (!running()) return;
  for (pid_t p : descendants(pid_)) ::kill(p, SIGSTOP);
}

std::string SshdFixture::user_key_pem() const { return read_all(user_key_path_); }
std::string SshdFixture::other_key_pem() const { return read_all(dir_ + "/other_key"); }
std::string SshdFixture::log() const { return read_all(dir_ + "/sshd.log"); }

}  // namespace runara::test
