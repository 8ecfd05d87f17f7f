// The client-limit verdict (load/client_limit.hpp): a busy client, a client behind its open-loop
// schedule, and the loads where neither says anything about the client (a bounded open loop
// waits on the server's slots; a closed loop has no schedule; a handful of requests).
#include <catch2/catch.hpp>

#include "load/client_limit.hpp"

using runara::ClientLoad;
using runara::judge_client_limit;

TEST_CASE("client limit: worker threads busy 90 % of the time make the client the limit", "[client_limit]") {
  ClientLoad load;
  load.threads = 2;
  load.wall_s = 10;
  load.cpu_s = 19;  // 95 % of 2 × 10 s
  auto v = judge_client_limit(load);
  CHECK(v.cpu_utilization == Approx(0.95));
  CHECK_THAT(v.reason, Catch::Contains("busy 95 %") && Catch::Contains("2 thread(s)"));
  load.cpu_s = 17;  // 85 %
  v = judge_client_limit(load);
  CHECK(v.cpu_utilization == Approx(0.85));
  CHECK(v.reason.empty());
  load.cpu_s = 25;  // clock noise past 100 %: clamped
  CHECK(judge_client_limit(load).cpu_utilization == 1.0);
}

TEST_CASE("client limit: an unbounded open loop behind its schedule is client-limited", "[client_limit]") {
  ClientLoad load;
  load.open_loop = true;
  load.threads = 1;
  load.wall_s = 10;
  load.cpu_s = 2;
  load.requests = 1000;
  load.scheduled_rate = 100;
  load.achieved_rate = 90;
  CHECK_THAT(judge_client_limit(load).reason, Catch::Contains("90.0/s against a schedule of 100.0/s"));
  load.achieved_rate = 99;
  load.p99_queue_ms = 25;
  CHECK_THAT(judge_client_limit(load).reason, Catch::Contains("more than 25.0 ms after they were due"));
  load.p99_queue_ms = 0.2;
  CHECK(judge_client_limit(load).reason.empty());
  // The same lateness says nothing where slots bound the loop (the wait is the server's), in a
  // closed loop (no schedule), or over a handful of requests.
  load.p99_queue_ms = 25;
  load.bounded = true;
  CHECK(judge_client_limit(load).reason.empty());
  load.bounded = false;
  load.open_loop = false;
  CHECK(judge_client_limit(load).reason.empty());
  load.open_loop = true;
  load.requests = 5;
  CHECK(judge_client_limit(load).reason.empty());
}
