// A simulated machine's box limits (sim/box_limits.hpp): derived from --max-memory with their
// floors, said in one line, and carried to the machine's init as text and back. What the limits do
// to a box's commands: end_to_end/test_sim_box_limits.cpp.
#include <catch2/catch.hpp>

#include <string>

#include "sim/box_limits.hpp"

using runara::sim::BoxLimits;

TEST_CASE("box limits: sized from --max-memory, with floors that keep the shims working", "[sim]") {
  const BoxLimits small = runara::sim::box_limits_for(std::size_t{64} << 20);
  CHECK(small.tmp_bytes == std::uint64_t{64} << 20);
  CHECK(small.home_bytes == std::uint64_t{64} << 20);
  CHECK(small.shm_bytes == std::uint64_t{64} << 20);   // M/4 would be 16 MiB: the floor
  CHECK(small.data_bytes == std::uint64_t{256} << 20);  // M would be 64 MiB: the floor
  CHECK(small.processes == 512);
  const BoxLimits usual = runara::sim::box_limits_for(std::size_t{1} << 30);
  CHECK(usual.tmp_bytes == std::uint64_t{1} << 30);
  CHECK(usual.shm_bytes == std::uint64_t{256} << 20);
  // A sanitizer build's own runara cannot start under a data limit (sim/box_limits.cpp): it says so.
#if defined(__SANITIZE_ADDRESS__)
  const char* data = "no data limit (a sanitizer build), ";
#else
  const char* data = "1 GiB of data and ";
#endif
  CHECK(runara::sim::describe_box_limits(usual) == std::string("/tmp 1 GiB, /dev/shm 256 MiB, home 1 GiB (all in memory), ") +
                                                       data + "1 GiB per file per process, 512 processes, 4096 open files per process");
}

TEST_CASE("box limits: the machine init's argument reads back whole, and a wrong one says what is wrong", "[sim]") {
  const BoxLimits sent = runara::sim::box_limits_for(std::size_t{3} << 30);
  BoxLimits got;
  REQUIRE(runara::sim::parse_box_limits(runara::sim::box_limits_argument(sent), got).empty());
  CHECK(runara::sim::box_limits_argument(got) == runara::sim::box_limits_argument(sent));
  BoxLimits ignored;
  CHECK(runara::sim::parse_box_limits("tmp=1,shm=1", ignored).find("do not name all of") != std::string::npos);
  CHECK(runara::sim::parse_box_limits("tmp=0", ignored).find("'tmp=0' is not NAME=POSITIVE_NUMBER") != std::string::npos);
  CHECK(runara::sim::parse_box_limits("swap=5", ignored).find("'swap=5'") != std::string::npos);
  CHECK(runara::sim::parse_box_limits("tmp=5x", ignored).find("'tmp=5x'") != std::string::npos);
}
