#include "sim/box_user.hpp"

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace runara::sim {

namespace {

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

void give(const std::string& path, const BoxUser& u) {
  if (::lchown(path.c_str(), u.uid, u.gid) != 0)
    throw std::runtime_error("simulated machine: cannot hand " + path + " to its box's user: " + std::strerror(errno));
}

std::optional<BoxUser> chosen;

bool allowed(const struct stat& st, mode_t user, mode_t group, mode_t other) {
  if (st.st_uid == kNobody) return (st.st_mode & user) != 0;
  if (st.st_gid == kNogroup) return (st.st_mode & group) != 0;
  return (st.st_mode & other) != 0;
}

// "" when nobody can enter every folder above `path` (and read `path` itself, with `read`); else
// the first one it cannot.
std::string blocked_on_the_way(const std::string& path, bool read) {
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    const std::string at = path.substr(0, slash);
    struct stat st {};
    if (::stat(at.c_str(), &st) != 0 || !allowed(st, S_IXUSR, S_IXGRP, S_IXOTH)) return at;
  }
  struct stat st {};
  if (read && (::stat(path.c_str(), &st) != 0 || !allowed(st, S_IRUSR, S_IRGRP, S_IROTH))) return path;
  return "";
}

}  // namespace

std::string choose_box_user(const std::vector<std::string>& folders, const std::vector<std::string>& readable) {
  chosen.reset();
  if (::geteuid() != 0) return "";
  std::string blocked;
  for (const auto& f : folders)
    if (blocked.empty()) blocked = blocked_on_the_way(f + "/", false);
  for (const auto& r : readable)
    if (blocked.empty()) blocked = blocked_on_the_way(r, true);
  if (!blocked.empty())
    return "runara runs as root and nobody cannot reach " + blocked + ", so the simulated machines run as root: "
           "their 512-process cap does not hold (the kernel exempts root). Put $TMPDIR, runara and its sim/machine "
           "folder where every user can reach them, or run runara as another user";
  chosen = BoxUser{kNobody, kNogroup};
  return "";
}

std::optional<BoxUser> box_user() { return chosen; }

void hand_to_box_user(const std::string& path, bool recursive) {
  const auto u = box_user();
  if (!u) return;
  give(path, *u);
  if (!recursive) return;
  for (const auto& e : std::filesystem::recursive_directory_iterator(path)) give(e.path().string(), *u);
}

int sim_box_user_main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "runara __sim_box_user is started by runara --sim itself\n");
    return 2;
  }
  const uid_t uid = static_cast<uid_t>(std::strtoul(argv[2], nullptr, 10));
  const gid_t gid = static_cast<gid_t>(std::strtoul(argv[3], nullptr, 10));
  // Groups first (that needs root), then the group and user ids, real, effective and saved alike.
  if (::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0) {
    std::fprintf(stderr, "runara __sim_box_user: cannot become %u:%u: %s\n", uid, gid, std::strerror(errno));
    return 1;
  }
  ::execv(argv[4], argv + 4);
  std::fprintf(stderr, "runara __sim_box_user: cannot run %s: %s\n", argv[4], std::strerror(errno));
  return 127;
}

}  // namespace runara::sim
