// Loading the script given on the command line: a folder, a device, an unreadable or a binary
// file gets a clear error and exit status 2 (it once aborted with std::ios_base::failure, 134).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "child_process.hpp"
#include "test_text.hpp"

using runara::test::run_runara;
using runara::test::temp_dir;

using runara::test::contains;

namespace {
}  // namespace

TEST_CASE("a script path that is not a readable Lua text file is a usage error", "[cli][script]") {
  const std::string dir = temp_dir("script-load");
  const std::string out = dir + "/out";
  SECTION("a folder") {
    auto r = run_runara({"--out", out, dir});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "'" + dir + "' is a folder"));
  }
  SECTION("a device") {
    auto r = run_runara({"--out", out, "/dev/null"});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "'/dev/null' is not a regular file"));
  }
  SECTION("an unreadable file") {
    const std::string path = dir + "/locked.lua";
    std::ofstream(path) << "print('hi')\n";
    chmod(path.c_str(), 0);
    if (access(path.c_str(), R_OK) == 0) {
      WARN("running as root: mode 000 is still readable, nothing to check");
      return;
    }
    auto r = run_runara({"--out", out, path});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "cannot read script '" + path + "'"));
    CHECK(contains(r.err, "Permission denied"));
  }
  SECTION("a binary file") {
    const std::string path = dir + "/blob.lua";
    std::ofstream(path, std::ios::binary) << std::string("print(1)\n\0\x01\x02garbage", 20);
    auto r = run_runara({"--out", out, path});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "'" + path + "' is a binary file, not a Lua script"));
  }
  SECTION("LuaJIT bytecode") {
    const std::string path = dir + "/bytecode.lua";
    std::ofstream(path, std::ios::binary) << "\x1bLJ\x02\x0a" << "xyz";
    auto r = run_runara({"--out", out, path});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "is a binary file, not a Lua script"));
  }
}
