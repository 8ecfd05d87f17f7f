#include "load/request_log.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "load/report.hpp"

namespace runara {

namespace {

constexpr std::size_t kMinQueueBuffers = 4;
constexpr std::size_t kLineSlack = 4096;  // the text buffer may pass kTextBytes by one line

}  // namespace

RequestLog::RequestLog(int fd, std::string name, std::size_t queue_bytes, int workers, std::shared_ptr<MemoryBudget> budget,
                       RequestLogOutput output)
    : fd_(fd), name_(std::move(name)), output_(output) {
  const bool bounded = budget != nullptr;
  held_ = MemoryReservation(std::move(budget), 0);
  reserve(queue_bytes, workers, bounded);
  queued_.reserve(pool_size_);
  spare_.reserve(pool_size_);
  try {
    thread_ = std::thread([this] { run(); });
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

RequestLog::~RequestLog() { finish(); }

// The whole queue if the budget has room, else the largest half, quarter ... of it that fits;
// nothing when not even kMinQueueBuffers do (every record is then left out).
void RequestLog::reserve(std::size_t queue_bytes, int workers, bool bounded) {
  const std::size_t per_worker = static_cast<std::size_t>(std::max(workers, 0));
  std::size_t pool = std::max(queue_bytes / kBatchBytes, kMinQueueBuffers);
  const auto bytes = [&](std::size_t n) { return (n + per_worker) * kBatchBytes + kTextBytes + kLineSlack; };
  if (!bounded) {  // no budget to draw from (tests, embedders)
    pool_size_ = pool;
    worker_batches_ = per_worker;
    return;
  }
  for (; pool >= kMinQueueBuffers; pool /= 2) {
    if (!held_.grow(bytes(pool))) continue;
    pool_size_ = pool;
    worker_batches_ = per_worker;
    return;
  }
}

RequestLog::Batch RequestLog::first_batch() {
  {
    std::lock_guard lock(mutex_);
    if (handed_out_ >= worker_batches_) return {};
    ++handed_out_;
  }
  Batch batch;
  batch.reserve(kBatchRecords);
  return batch;
}

std::size_t RequestLog::hand_over(Batch& batch) {
  if (batch.empty()) return 0;
  Batch next;
  bool allocate = false, wake = false;
  {
    std::lock_guard lock(mutex_);
    if (!spare_.empty()) {
      next = std::move(spare_.back());
      spare_.pop_back();
    } else if (made_ < pool_size_) {
      ++made_;
      allocate = true;
    } else {
      // Every buffer is queued or being written: the writer is behind. The worker keeps its
      // buffer; these records are counted, not kept.
      const std::size_t dropped = batch.size();
      batch.clear();
      return dropped;
    }
    queued_.push_back(std::move(batch));
    wake = queued_.size() >= std::max<std::size_t>(1, pool_size_ / 4);
  }
  if (wake) wake_.notify_one();
  batch = std::move(next);
  if (allocate) batch.reserve(kBatchRecords);
  return 0;
}

std::string RequestLog::finish() {
  if (finished_) return error_;
  finished_ = true;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  if (::close(fd_) != 0 && error_.empty()) error_ = "cannot write " + name_ + ": " + std::strerror(errno);
  return error_;
}

std::uint64_t RequestLog::lines_written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

void RequestLog::run() {
  // The writer yields the cores to the workers (and, on one machine, to the server under test)
  // whenever they want them: it needs a few per cent of a core and has a second of records
  // queued, so at nice 10 it still keeps up, but a waking worker no longer waits for it. Lowering
  // one's own thread's priority needs no privilege; where it is refused anyway, nothing changes.
  setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
  std::vector<Batch> taken;
  taken.reserve(pool_size_);
  std::string text;
  text.reserve(kTextBytes + kLineSlack);
  std::uint64_t lines = 0;  // in `text`: counted as formatted, not by scanning the bytes again
  const std::size_t wake_at = std::max<std::size_t>(1, pool_size_ / 4);
  for (bool last = false; !last;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(kWakeMs), [&] { return stopping_ || queued_.size() >= wake_at; });
      taken.swap(queued_);
      last = stopping_;  // finish() comes after the last hand_over: nothing can follow it
    }
    write_batches(taken, text, lines);
    write_text(text, lines);
  }
}

// Formats the batches (writing each kTextBytes as it fills) and puts their buffers back.
void RequestLog::write_batches(std::vector<Batch>& batches, std::string& text, std::uint64_t& lines) {
  for (const Batch& batch : batches) {
    for (const RequestRecord& r : batch) {
      if (output_.format) output_.format(text, r);
      else append_request_line(text, r);
      ++lines;
      if (text.size() >= kTextBytes) write_text(text, lines);
    }
  }
  std::lock_guard lock(mutex_);
  for (Batch& batch : batches) {
    batch.clear();
    spare_.push_back(std::move(batch));
  }
  batches.clear();
}

// Appends `text` (its `lines` whole lines) to the file and empties it. After a failed write the
// rest is dropped: finish() reports the first error.
void RequestLog::write_text(std::string& text, std::uint64_t& lines) {
  std::size_t done = 0;
  std::unique_lock<std::mutex> shared_fd;
  if (output_.fd_lock) shared_fd = std::unique_lock(*output_.fd_lock);
  while (error_.empty() && done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = "cannot write " + name_ + ": " + (n < 0 ? std::strerror(errno) : "nothing was written");
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (error_.empty()) {
    std::lock_guard lock(mutex_);
    written_ += lines;
  }
  text.clear();
  lines = 0;
}

}  // namespace runara
