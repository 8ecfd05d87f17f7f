// Which user of this computer a simulated machine's box runs as. A box's user is, to the kernel,
// the user bubblewrap was started as. Started by root that is kernel uid 0, which the kernel
// exempts from RLIMIT_NPROC in every namespace (a box of root's could fork without end) and whose
// per-user counts (inotify instances, keyrings) are root's. So when runara runs as root, bubblewrap
// is started as `nobody` instead (`runara __sim_box_user`, which drops to it and execs bubblewrap),
// and the files the box needs are handed to nobody (its machine's folder, its VPC's fabric), the
// simulated cloud's folder is opened to every user's walk (0711: no listing); otherwise the box runs
// as the user running runara, as before. Where nobody cannot walk to the cloud's folder, runara or
// the shims ($TMPDIR under a private folder, a build under /root), root's boxes stay root's, and
// the cloud says that their process cap does not hold.
//
// Contract: choose_box_user is called once per process, by the simulated cloud before its first
// machine (not thread-safe against box_user); box_user then returns the choice. hand_to_box_user
// changes ownership (no-op without a box user); sim_box_user_main runs as its own process and only
// execs.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace runara::sim {

struct BoxUser {
  uid_t uid;
  gid_t gid;
};

// Chooses nobody when this process runs as root and nobody can walk to every folder of `folders`
// and read every file or folder of `readable`. "" or why root's boxes stay root's.
std::string choose_box_user(const std::vector<std::string>& folders, const std::vector<std::string>& readable);

// nobody (65534) when choose_box_user chose it; nullopt otherwise.
std::optional<BoxUser> box_user();

// Gives `path` (and, with `recursive`, everything below it) to the box's user when it has one.
// Throws std::runtime_error when the kernel refuses.
void hand_to_box_user(const std::string& path, bool recursive);

// `runara __sim_box_user UID GID PROGRAM [ARGS...]`: drops every group and becomes UID:GID for
// good, then execs PROGRAM (bubblewrap). Started by SimMachine only.
int sim_box_user_main(int argc, char** argv);

}  // namespace runara::sim
