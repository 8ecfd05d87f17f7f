// requests.jsonl's writer (runtime/load/request_log.hpp): lines reach the file while the log is
// still open; a writer that cannot keep up (here: blocked on a pipe nobody reads) makes
// hand_over() drop and count records instead of waiting or growing; what it reserves from the
// run's budget is fixed when it is made, and without room it keeps nothing.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "eventually.hpp"
#include "load/request_log.hpp"

using runara::MemoryBudget;
using runara::RequestLog;
using runara::RequestRecord;

namespace {

RequestLog::Batch records(RequestLog::Batch batch, std::uint64_t first, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    RequestRecord r;
    r.index = first + i;
    r.sent_ns = r.intended_ns = static_cast<std::int64_t>(i) * 1000;
    r.done_ns = r.sent_ns + 5'000'000;
    r.status = 200;
    batch.push_back(r);
  }
  return batch;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("request log: lines reach the file while the log is open, whole and in hand-over order", "[request_log]") {
  const std::string path = runara::test::temp_dir("request-log") + "/requests.jsonl";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  RequestLog log(fd, "requests.jsonl", RequestLog::kDefaultQueueBytes, 1, nullptr);
  RequestLog::Batch batch = records(log.first_batch(), 0, 10);
  REQUIRE(log.hand_over(batch) == 0);
  CHECK(batch.empty());
  CHECK(batch.capacity() == RequestLog::kBatchRecords);  // a buffer to fill again
  // Not finished: the writer wakes by itself (every 100 ms) and appends what was handed over.
  REQUIRE(runara::test::eventually([&] { return lines_of(path).size() == 10; }, 5));
  CHECK(log.lines_written() == 10);
  batch = records(std::move(batch), 10, 5);
  REQUIRE(log.hand_over(batch) == 0);
  REQUIRE(log.finish().empty());
  const auto lines = lines_of(path);
  REQUIRE(lines.size() == 15);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto j = nlohmann::json::parse(lines[i]);
    CHECK(j["index"] == i);
    CHECK(j["e2el_ms"] == 5.0);
  }
}

TEST_CASE("request log: a writer that is behind makes hand_over drop and count, never wait", "[request_log]") {
  int pipe_fds[2];
  REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
  // The smallest queue (4 buffers); the writer blocks on the pipe once its 64 KiB are full.
  RequestLog log(pipe_fds[1], "pipe", 1, 1, nullptr);
  REQUIRE(log.queue_buffers() == 4);
  RequestLog::Batch batch = log.first_batch();
  std::size_t handed = 0, dropped = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 40 && dropped == 0; ++i) {
    batch = records(std::move(batch), handed, RequestLog::kBatchRecords);
    handed += RequestLog::kBatchRecords;
    dropped += log.hand_over(batch);
    CHECK(batch.empty());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // lets the writer take what it can
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(dropped == RequestLog::kBatchRecords);  // the whole batch that found no free buffer
  CHECK(seconds < 5);
  CHECK(batch.capacity() == RequestLog::kBatchRecords);  // the worker keeps its own buffer

  std::size_t bytes = 0, lines = 0;
  std::thread reader([&] {
    char buf[65536];
    for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) {
      bytes += static_cast<std::size_t>(n);
      lines += static_cast<std::size_t>(std::count(buf, buf + n, '\n'));
    }
  });
  CHECK(log.finish().empty());  // closes the write end: the reader sees the end
  reader.join();
  ::close(pipe_fds[0]);
  CHECK(lines == handed - dropped);
  CHECK(log.lines_written() == lines);
  CHECK(bytes > 0);
}

TEST_CASE("request log: what it reserves is fixed when it is made; without room it keeps nothing", "[request_log]") {
  const std::string dir = runara::test::temp_dir("request-log-budget");
  auto budget = std::make_shared<MemoryBudget>(std::size_t{64} << 20);
  {
    const int fd = ::open((dir + "/a.jsonl").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    RequestLog log(fd, "a.jsonl", RequestLog::kDefaultQueueBytes, 2, budget);
    const std::size_t reserved = budget->reserved();
    CHECK(reserved == log.reserved_bytes());
    CHECK(reserved == (RequestLog::kDefaultQueueBytes + 2 * RequestLog::kBatchBytes + RequestLog::kTextBytes + 4096));
    RequestLog::Batch batch = log.first_batch();
    for (std::uint64_t n = 0; n < 20000; n += RequestLog::kBatchRecords) {
      batch = records(std::move(batch), n, RequestLog::kBatchRecords);
      log.hand_over(batch);
      CHECK(budget->reserved() == reserved);
    }
    CHECK(log.finish().empty());
  }
  CHECK(budget->reserved() == 0);  // given back with the log

  // A budget with 5 MiB left: the queue is halved until it fits.
  auto small = std::make_shared<MemoryBudget>(std::size_t{5} << 20);
  {
    const int fd = ::open((dir + "/b.jsonl").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    RequestLog log(fd, "b.jsonl", RequestLog::kDefaultQueueBytes, 1, small);
    CHECK(log.queue_buffers() == RequestLog::kDefaultQueueBytes / RequestLog::kBatchBytes / 4);
    CHECK(small->reserved() <= small->limit());
  }

  // No room at all: no buffers, and every record handed over is counted as dropped.
  auto none = std::make_shared<MemoryBudget>(std::size_t{256} << 10);
  const int fd = ::open((dir + "/c.jsonl").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  RequestLog log(fd, "c.jsonl", RequestLog::kDefaultQueueBytes, 1, none);
  CHECK(log.queue_buffers() == 0);
  CHECK(none->reserved() == 0);
  CHECK(log.first_batch().capacity() == 0);
  RequestLog::Batch batch = records({}, 0, 3);
  CHECK(log.hand_over(batch) == 3);
  CHECK(log.finish().empty());
  CHECK(lines_of(dir + "/c.jsonl").empty());
}

TEST_CASE("request log: a failed write is reported by finish(), naming the file and the reason", "[request_log]") {
  const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  RequestLog log(fd, "out/load/requests.jsonl", RequestLog::kDefaultQueueBytes, 1, nullptr);
  RequestLog::Batch batch = records(log.first_batch(), 0, 3);
  REQUIRE(log.hand_over(batch) == 0);
  CHECK(log.finish() == "cannot write out/load/requests.jsonl: No space left on device");
  CHECK(log.lines_written() == 0);
  CHECK(log.finish() == "cannot write out/load/requests.jsonl: No space left on device");  // once, then the same answer
}
