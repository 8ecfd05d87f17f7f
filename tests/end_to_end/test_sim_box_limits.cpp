// How much of this computer a simulated machine may take (sim/box_limits.hpp), tried from the
// box under `runara --sim --max-memory 64M` and `runara plan`: filling /tmp, /dev/shm and its home
// past their sizes, writing where it has no size (/dev, its root, the rest of its folder),
// forking past the process cap (runara run as root and as another user), allocating past the
// per-process memory cap. Each probe prints NAME=yes when it got through, NAME=no when it did
// not. (test_sim_box_kernel.cpp tries what namespaces do not separate.)
#include <catch2/catch.hpp>

#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "test_text.hpp"

using namespace runara::test;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// With --max-memory 64M: /tmp and home 64 MiB, /dev/shm 64 MiB (its floor), 64 MiB per file,
// 256 MiB of data per process (its floor), 512 processes. Every fill writes files under 64 MiB,
// so it is the folder's size that stops it, not the file size.
const char* kProbe = R"==(
local d = droplet.create{ name = "box", size = "gpu-mi300x1-192gb", image = "gpu-amd-base", region = "atl1" }
local s = ssh.connect(d, { timeout = 30 })
local function probe(name, command)
  local r = s:exec("(" .. command .. ") >/dev/null 2>&1 && echo " .. name .. "=yes || echo " .. name .. "=no", { quiet = true })
  print(r.stdout)
end
local function fill(folder, files, mib)
  return "for i in $(seq " .. files .. "); do head -c " .. mib .. "M /dev/zero > " .. folder .. "/runara-fill-$i || exit 1; done"
end
probe("tmp_200m", fill("/tmp", 4, 50))
s:exec("rm -f /tmp/runara-fill-*", { quiet = true })
probe("shm_120m", fill("/dev/shm", 4, 30))
s:exec("rm -f /dev/shm/runara-fill-*", { quiet = true })
probe("home_200m", fill("$HOME", 4, 50))
s:exec("rm -f $HOME/runara-fill-*", { quiet = true })
probe("var_tmp_200m", fill("/var/tmp", 4, 50))
s:exec("rm -f /var/tmp/runara-fill-*", { quiet = true })
probe("file_100m", "head -c 100M /dev/zero > /tmp/runara-one && test $(stat -c %s /tmp/runara-one) -eq 104857600")
s:exec("rm -f /tmp/runara-one", { quiet = true })
probe("write_dev", "touch /dev/runara-probe")
probe("write_root", "touch /runara-probe")
probe("write_etc", "touch /etc/runara-probe")
probe("write_machine_folder", "touch $RUNARA_SIM_STATE/../runara-probe")
probe("alloc_400m", "perl -e '$x = q(a) x (400 * 1024 * 1024); exit 0'")
probe("alloc_64m", "perl -e '$x = q(a) x (64 * 1024 * 1024); exit 0'")
local u = s:exec("echo nproc=$(ulimit -u) nofile=$(ulimit -n) nofile_hard=$(ulimit -Hn) fsize=$(ulimit -f)", { quiet = true })
print(u.stdout)
)==";

int number_after(const std::string& text, const std::string& name) {
  const auto at = text.find(name + "=");
  return at == std::string::npos ? -1 : std::atoi(text.c_str() + at + name.size() + 1);
}

// 700 children that wait, then all killed: how many the kernel let it start.
const char* kForks = R"==(
local d = droplet.create{ name = "box", size = "gpu-mi300x1-192gb", image = "gpu-amd-base", region = "atl1" }
local s = ssh.connect(d, { timeout = 30 })
local f = s:exec([[perl -e 'my @k; for (1 .. 700) { my $p = fork; last unless defined $p; if (!$p) { sleep 30; exit 0 } push @k, $p } print "forked=" . scalar(@k) . "\n"; kill 9, @k; waitpid($_, 0) for @k']], { quiet = true })
print(f.stdout)
)==";

}  // namespace

TEST_CASE("sim: a simulated machine's folders, processes and memory are capped from --max-memory", "[sim][isolation]") {
  const std::string dir = temp_dir("sim-box-limits");
  const auto r = run_runara({"--sim", "--max-memory", "64M", "--out", dir + "/out", "-e", kProbe}, 120);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* got : {"tmp_200m=no", "shm_120m=no", "home_200m=no", "var_tmp_200m=no", "file_100m=no",
                          "write_dev=no", "write_root=no", "write_etc=no", "write_machine_folder=no", "alloc_64m=yes"})
    CHECK(contains(r.out, got));
  // A sanitizer build's boxes have no data limit: its own runara could not start under one.
  CHECK(contains(r.out, kSanitized ? "alloc_400m=yes" : "alloc_400m=no"));
  CHECK(number_after(r.out, "nproc") == 512);
  CHECK(number_after(r.out, "nofile") == 4096);
  CHECK(number_after(r.out, "nofile_hard") == 4096);
  CHECK(number_after(r.out, "fsize") == 64 * 1024 * 1024 / 1024);  // ulimit -f counts KiB
}

TEST_CASE("runara plan: it names the box's limits, and a fork bomb and a full /tmp stay inside them",
          "[sim][isolation]") {
  const std::string dir = temp_dir("plan-box-limits");
  const std::string script = write_temp_file(dir, "bomb.lua", std::string(kProbe));
  const auto r = run_runara({"plan", "--max-memory", "64M", script}, 180);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "it ran to the end"));
  CHECK(contains(r.out, std::string("Each machine's box: /tmp 64 MiB, /dev/shm 64 MiB, home 64 MiB (all in memory), ") +
                           (kSanitized ? "no data limit (a sanitizer build), " : "256 MiB of data and ") +
                           "64 MiB per file per process, 512 processes, 4096 open files per process."));
}

// How many of kForks' 700 children the box let it start, runara run by `prefix` (or directly).
int forks(const std::vector<std::string>& prefix, const std::string& dir, std::map<std::string, std::string> env) {
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {RUNARA_BINARY, "--sim", "--out", dir + "/out", "-e", kForks});
  ChildProcess child(argv, env);
  child.close_stdin();
  const ChildResult r = child.wait(90);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return number_after(r.out, "forked");
}

// RLIMIT_NPROC caps the tasks of the box's user in the box's own user namespace, except those of
// kernel uid 0: run by root, runara starts its boxes as nobody (sim/box_user.hpp).
TEST_CASE("sim: a simulated machine forks at most 512 processes, whether runara runs as root or not",
          "[sim][isolation]") {
  const std::string dir = temp_dir("sim-box-forks");
  const int as_this_user = forks({}, dir, {});
  CHECK(as_this_user > 100);  // a machine still runs what it needs
  CHECK(as_this_user < 512);  // sshd, its session and the shell count too
  if (::geteuid() != 0) return;
  if (::access("/usr/bin/setpriv", X_OK) != 0) {
    WARN("no setpriv: the cap for a runara run by another user than root is not tried");
    return;
  }
  // The same run as an ordinary user (nobody): its boxes are that user's.
  const std::string other = temp_dir("sim-box-forks-nobody");
  REQUIRE(::chown(other.c_str(), 65534, 65534) == 0);
  const int as_nobody = forks({"/usr/bin/setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"}, other,
                              {{"HOME", other}, {"TMPDIR", other}});
  CHECK(as_nobody > 100);
  CHECK(as_nobody < 512);
}
