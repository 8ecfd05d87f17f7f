#include "sim/box_seccomp.hpp"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

namespace runara::sim {

namespace {

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#else
#error "the simulated machine's seccomp filter knows x86_64 and aarch64 only"
#endif

// aarch64 has no inotify_init (only inotify_init1).
constexpr long kRefused[] = {
    SYS_keyctl, SYS_add_key, SYS_request_key, SYS_syslog, SYS_perf_event_open, SYS_bpf, SYS_userfaultfd,
#ifdef SYS_inotify_init
    SYS_inotify_init,
#endif
    SYS_inotify_init1};

constexpr sock_filter statement(unsigned short code, unsigned k) { return {code, 0, 0, k}; }
constexpr sock_filter jump(unsigned short code, unsigned k, unsigned char yes, unsigned char no) {
  return {code, yes, no, k};
}

std::vector<sock_filter> program() {
  constexpr unsigned kEperm = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  std::vector<sock_filter> p;
  // Another architecture's numbers mean other calls (a 32-bit call through int 0x80): killed.
  p.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
  p.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  p.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
#if defined(__x86_64__)
  // x32 calls carry bit 30 and reach the same kernel code under other numbers.
  p.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
  p.push_back(statement(BPF_RET | BPF_K, kEperm));
#endif
  for (long nr : kRefused) {
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(nr), 0, 1));
    p.push_back(statement(BPF_RET | BPF_K, kEperm));
  }
  p.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return p;
}

}  // namespace

std::string install_box_seccomp() {
  std::vector<sock_filter> p = program();
  sock_fprog prog{static_cast<unsigned short>(p.size()), p.data()};
  // no_new_privs is what lets an unprivileged process install a filter; it also keeps a
  // setuid program in the box from running with more than the box's rights.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return std::string("cannot set no_new_privs: ") + std::strerror(errno);
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
    return std::string("cannot install the seccomp filter: ") + std::strerror(errno);
  return "";
}

}  // namespace runara::sim
