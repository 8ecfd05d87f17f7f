// When received bytes reached this machine, from the kernel's receive timestamp, on the
// monotonic clock uv_hrtime() reads.
//
// A thread that is woken late (a busy machine, another thread on its core) reads bytes that have
// waited in the socket; timing them at read would add that wait to the latency measured. With
// SO_TIMESTAMPNS the kernel stamps each segment as it arrives (CLOCK_REALTIME); we take the
// bytes' age in the socket from the realtime clock and subtract it from the monotonic one.
#pragma once

#include <sys/socket.h>

#include <cstdint>

namespace runara {

// Asks the kernel to stamp what `fd` receives. False when the socket does not support it.
bool enable_arrival_times(int fd);

// The arrival time carried by a recvmsg() result (its control buffer must have room for
// kArrivalControlBytes); the time now when it carries none or the realtime clock stepped.
std::int64_t arrival_time_ns(const msghdr& msg);
constexpr std::size_t kArrivalControlBytes = CMSG_SPACE(16);  // one struct timespec

// The arrival time of the data waiting in `fd`, read without consuming it (MSG_PEEK); -1 when
// nothing is waiting or it carries no stamp.
std::int64_t waiting_arrival_time_ns(int fd);

}  // namespace runara
