#include "sim/box_limits.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace runara::sim {

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Floors: the shims' servers (runara serve-fake-llm, nginx) and an upload of a script's files
// need this much whatever --max-memory says about the script's own Lua heap.
constexpr std::uint64_t kMinFolder = 64 * kMiB;
constexpr std::uint64_t kMinData = 256 * kMiB;

// A busy machine (sshd with the stdlib's parallel sessions, a simulated vLLM server's threads,
// nginx, ray and torchrun shims) runs well under 200 tasks; a fork bomb stops here.
constexpr std::uint64_t kProcesses = 512;
constexpr std::uint64_t kOpenFiles = 4096;

std::string size_text(std::uint64_t bytes) {
  char b[32];
  if (bytes >= (std::uint64_t{1} << 30) && bytes % (std::uint64_t{1} << 30) == 0)
    std::snprintf(b, sizeof b, "%llu GiB", static_cast<unsigned long long>(bytes >> 30));
  else
    std::snprintf(b, sizeof b, "%llu MiB", static_cast<unsigned long long>(bytes / kMiB));
  return b;
}

struct Field {
  const char* name;
  std::uint64_t BoxLimits::*member;
};
constexpr Field kFields[] = {{"tmp", &BoxLimits::tmp_bytes},     {"shm", &BoxLimits::shm_bytes},
                             {"home", &BoxLimits::home_bytes},   {"state", &BoxLimits::state_bytes},
                             {"data", &BoxLimits::data_bytes},   {"fsize", &BoxLimits::file_bytes},
                             {"nproc", &BoxLimits::processes},   {"nofile", &BoxLimits::open_files}};

// Soft and hard alike, so nothing in the box raises it again; never above a hard limit this
// computer already set lower (raising it would be refused).
std::string set_limit(int resource, const char* name, std::uint64_t value) {
  rlimit r{};
  if (::getrlimit(resource, &r) != 0) return std::string("cannot read ") + name + ": " + std::strerror(errno);
  r.rlim_max = std::min<rlim_t>(r.rlim_max, static_cast<rlim_t>(value));
  r.rlim_cur = r.rlim_max;
  if (::setrlimit(resource, &r) == 0) return "";
  return std::string("cannot set ") + name + " to " + std::to_string(value) + ": " + std::strerror(errno);
}

}  // namespace

// An AddressSanitizer build of runara (CI's second build) runs inside the box too (the machine's
// init, the simulated LLM server), and ASan reserves terabytes of shadow address space as it
// starts: under a data limit it cannot start at all ("Failed to mmap"). Such a build boxes its
// machines without that one limit, and says so wherever the limits are shown.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kDataLimitApplies = false;
#else
constexpr bool kDataLimitApplies = true;
#endif

BoxLimits box_limits_for(std::size_t max_memory_bytes) {
  const std::uint64_t m = std::max<std::uint64_t>(max_memory_bytes, kMinFolder);
  BoxLimits l;
  l.tmp_bytes = m;
  l.home_bytes = m;
  l.shm_bytes = std::max(m / 4, kMinFolder);
  l.state_bytes = std::max(m / 16, kMinFolder);
  l.data_bytes = std::max(m, kMinData);
  l.file_bytes = m;
  l.processes = kProcesses;
  l.open_files = kOpenFiles;
  return l;
}

std::string describe_box_limits(const BoxLimits& l) {
  return "/tmp " + size_text(l.tmp_bytes) + ", /dev/shm " + size_text(l.shm_bytes) + ", home " +
         size_text(l.home_bytes) + " (all in memory), " +
         (kDataLimitApplies ? size_text(l.data_bytes) + " of data and " : std::string("no data limit (a sanitizer build), ")) +
         size_text(l.file_bytes) + " per file per process, " + std::to_string(l.processes) + " processes, " +
         std::to_string(l.open_files) + " open files per process";
}

std::string box_limits_argument(const BoxLimits& l) {
  std::ostringstream s;
  for (const Field& f : kFields) s << (&f == kFields ? "" : ",") << f.name << '=' << l.*(f.member);
  return s.str();
}

std::string parse_box_limits(const std::string& text, BoxLimits& l) {
  constexpr const char* kNames = "tmp, shm, home, state, data, fsize, nproc, nofile";
  std::istringstream in(text);
  std::string item;
  std::size_t seen = 0;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    const auto named = [&](const Field& x) { return eq != std::string::npos && item.compare(0, eq, x.name) == 0; };
    const auto* f = std::find_if(std::begin(kFields), std::end(kFields), named);
    char* end = nullptr;
    const unsigned long long v = f == std::end(kFields) ? 0 : std::strtoull(item.c_str() + eq + 1, &end, 10);
    if (f == std::end(kFields) || end == item.c_str() + eq + 1 || *end != '\0' || v == 0)
      return "box limit '" + item + "' is not NAME=POSITIVE_NUMBER, NAME one of " + kNames;
    l.*(f->member) = v;
    ++seen;
  }
  return seen == std::size(kFields) ? "" : "box limits '" + text + "' do not name all of " + kNames;
}

// MSGQUEUE, SIGPENDING and MEMLOCK are counted per user across namespaces: left at their
// defaults a box could use up the allowance of the user running runara. No simulated program
// uses POSIX message queues or locks memory; signals queue only by the thousand.
std::string apply_box_rlimits(const BoxLimits& l) {
  for (std::string e : {kDataLimitApplies ? set_limit(RLIMIT_DATA, "RLIMIT_DATA", l.data_bytes) : std::string(),
                        set_limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", l.file_bytes),
                        set_limit(RLIMIT_NPROC, "RLIMIT_NPROC", l.processes),
                        set_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", l.open_files),
                        set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0), set_limit(RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE", 0),
                        set_limit(RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING", 1024),
                        set_limit(RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK", 64 * 1024)})
    if (!e.empty()) return e;
  return "";
}

}  // namespace runara::sim
