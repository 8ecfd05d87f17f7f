#include "sim/sim_machine_init.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "sim/box_limits.hpp"
#include "sim/box_seccomp.hpp"

namespace runara::sim {

namespace {

bool send_fd(int channel, int fd) {
  char byte = 'S';
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return ::sendmsg(channel, &msg, MSG_NOSIGNAL) == 1;
}

pid_t start(char** argv) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execv(argv[0], argv);
    std::fprintf(stderr, "runara __sim_machine_init: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  return pid;
}

}  // namespace

int sim_machine_init_main(int argc, char** argv) {
  if (argc < 4 || ::fcntl(kMachineInitFd, F_GETFD) < 0) {
    std::fprintf(stderr, "runara __sim_machine_init is started by runara --sim itself\n");
    return 2;
  }
  // Before sshd, so that nothing the box runs starts without them (they are inherited and can
  // only be lowered). Said on stderr, which is the machine's sshd.log: runara reports it.
  BoxLimits limits;
  std::string problem = parse_box_limits(argv[2], limits);
  if (problem.empty()) problem = apply_box_rlimits(limits);
  if (problem.empty()) problem = install_box_seccomp();
  if (!problem.empty()) {
    std::fprintf(stderr, "runara __sim_machine_init: %s\n", problem.c_str());
    return 1;
  }
  // The machine's own commands run as this same user: not dumpable, so they cannot ptrace this
  // process and hand runara a socket of their making. sshd must not inherit the channel.
  ::prctl(PR_SET_DUMPABLE, 0);
  ::fcntl(kMachineInitFd, F_SETFD, FD_CLOEXEC);
  ::signal(SIGPIPE, SIG_IGN);
  const pid_t sshd = start(argv + 3);
  if (sshd < 0) return 1;
  for (;;) {
    pollfd p{kMachineInitFd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 500);
    int status = 0;
    if (::waitpid(sshd, &status, WNOHANG) == sshd) return 1;  // the machine is gone
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char byte;
    const ssize_t n = ::read(kMachineInitFd, &byte, 1);
    if (n == 0 || (n < 0 && errno != EINTR)) break;  // runara closed its end: the machine ends
    if (n < 0) continue;
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool sent = s >= 0 && send_fd(kMachineInitFd, s);
    if (s >= 0) ::close(s);
    if (!sent) break;
  }
  ::kill(sshd, SIGKILL);
  int status = 0;
  ::waitpid(sshd, &status, 0);
  return 0;
}

}  // namespace runara::sim
