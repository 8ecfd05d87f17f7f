// The per-run memory budget (runtime/base/memory_budget.*) and reading a file only after its size
// was checked (runtime/base/checked_read.*): real threads, real files, a real FIFO.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>
#include <vector>

#include "base/checked_read.hpp"
#include "child_process.hpp"
#include "runara/memory_budget.hpp"

using runara::MemoryBudget;
using runara::MemoryReservation;

TEST_CASE("The memory budget shares one limit between the Lua heap and reservations", "[memory_budget]") {
  auto budget = std::make_shared<MemoryBudget>(100);
  budget->heap_used = 40;
  CHECK(budget->reserve(60));
  CHECK_FALSE(budget->reserve(1));
  CHECK(budget->left() == 0);
  budget->release(60);
  CHECK(budget->left() == 60);
  CHECK_FALSE(budget->reserve(SIZE_MAX));  // no overflow into "fits"

  SECTION("a reservation gives its bytes back when it goes, and grows only within the limit") {
    {
      MemoryReservation r(budget, 0);
      CHECK(r.grow(50));
      CHECK_FALSE(r.grow(11));
      CHECK(r.bytes() == 50);
      r.shrink_to(20);
      CHECK(budget->reserved() == 20);
      MemoryReservation other(budget, 0);
      CHECK(other.grow(5));
      r.absorb(std::move(other));
      CHECK(r.bytes() == 25);
      CHECK(other.bytes() == 0);
    }
    CHECK(budget->reserved() == 0);
  }

  SECTION("the refusal names what, how much, and the flag to raise") {
    budget->heap_used = 0;
    const std::string why = budget->refusal(3u << 20, "the pool");
    CHECK(why == "the pool needs about 3 MiB, more than the 1 MiB left of the run's memory limit of 1 MiB (raise it with --max-memory)");
  }

  SECTION("threads reserving at once never take more than the limit together") {
    auto shared = std::make_shared<MemoryBudget>(1000);
    std::atomic<int> granted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 1000; ++i) {
          if (shared->reserve(1)) ++granted;
        }
      });
    }
    for (auto& t : threads) t.join();
    CHECK(granted == 1000);
    CHECK(shared->reserved() == 1000);
  }
}

TEST_CASE("read_file_checked asks before it reads, and refuses what is not a regular file", "[memory_budget]") {
  const std::string dir = runara::test::temp_dir("checked_read");
  const std::string path = runara::test::write_temp_file(dir, "f.txt", "hello");
  std::string out;
  std::size_t asked = 0;

  SECTION("the size comes first; a refusal reads nothing") {
    CHECK(runara::read_file_checked(path, [&](std::size_t size) { asked = size; return std::string("too big"); }, out) == "too big");
    CHECK(asked == 5);
    CHECK(out.empty());
  }
  SECTION("an accepted file is read whole") {
    CHECK(runara::read_file_checked(path, [](std::size_t) { return std::string(); }, out).empty());
    CHECK(out == "hello");
  }
  SECTION("a folder and a FIFO are refused without blocking or asking") {
    const std::string fifo = dir + "/fifo";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    for (const std::string& p : {dir, fifo}) {
      const std::string why = runara::read_file_checked(p, [&](std::size_t) { ++asked; return std::string(); }, out);
      CHECK(why == "'" + p + "' is not a regular file");
    }
    CHECK(asked == 0);
  }
  SECTION("a missing file says so") {
    CHECK(runara::read_file_checked(dir + "/none", [](std::size_t) { return std::string(); }, out).find("cannot read '") == 0);
  }
}
