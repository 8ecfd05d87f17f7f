#include "net/arrival_time.hpp"

#include <sys/uio.h>
#include <time.h>

#include <cstring>

namespace runara {

namespace {

std::int64_t ns_of(const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

std::int64_t clock_ns(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return ns_of(t);
}

// -1 when the message carries no receive timestamp.
std::int64_t stamped_ns(const msghdr& msg) {
  if (msg.msg_controllen == 0) return -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(const_cast<msghdr*>(&msg), c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    timespec rx{};
    std::memcpy(&rx, CMSG_DATA(c), sizeof rx);
    const std::int64_t mono = clock_ns(CLOCK_MONOTONIC);
    const std::int64_t age = clock_ns(CLOCK_REALTIME) - ns_of(rx);
    // A negative or huge age means the realtime clock was stepped meanwhile: not a usable stamp.
    return age >= 0 && age < 10'000'000'000 ? mono - age : -1;
  }
  return -1;
}

}  // namespace

static_assert(sizeof(timespec) == 16, "kArrivalControlBytes assumes a 16-byte timespec");

bool enable_arrival_times(int fd) {
  const int on = 1;
  return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0;
}

std::int64_t arrival_time_ns(const msghdr& msg) {
  const std::int64_t at = stamped_ns(msg);
  return at >= 0 ? at : clock_ns(CLOCK_MONOTONIC);
}

std::int64_t waiting_arrival_time_ns(int fd) {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[kArrivalControlBytes];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (recvmsg(fd, &msg, MSG_PEEK | MSG_DONTWAIT) <= 0) return -1;
  return stamped_ns(msg);
}

}  // namespace runara
