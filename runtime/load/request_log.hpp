// requests.jsonl written while the load runs: worker threads hand over batches of finished
// requests' records, and one writer thread formats them as lines and appends them to the file.
//
// Contract. Memory is fixed when the log is made, whatever the number of requests: a pool of
// batch buffers (the queue's byte cap), one batch per worker and the writer's text buffer, all
// reserved from the run's budget up front (a smaller queue when the budget is short; none at
// all when it has no room, and then every record is left out). Buffers are recycled, never
// freed while the load runs. Workers never wait for the writer: hand_over() holds a lock only
// to swap vectors, and when every buffer is queued or being written (the writer is behind) the
// batch's records are dropped and counted, for request_lines_left_out. The writer appends
// whole lines with write(2) each time it wakes (every kWakeMs, or when a quarter of the queue
// is full), so a crash or SIGKILL keeps every line written before it; only a fatal signal
// landing inside one write(2) can cut that write between two pages, leaving at most the last
// line incomplete.
// Threads: first_batch() and hand_over() from any thread; finish() from one thread, after every
// worker has handed over its last batch.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "load/request_record.hpp"
#include "runara/memory_budget.hpp"

namespace runara {

// How a RequestLog's records become text, and who else writes to its fd: requests.jsonl's lines
// by default; the remote load agent (agent/) writes its protocol's record lines to its stdout,
// which its main thread shares (each write(2) of the writer then holds `fd_lock`).
struct RequestLogOutput {
  // Appends exactly one line (lines_written() counts records formatted, not the bytes' newlines).
  void (*format)(std::string& out, const RequestRecord& record) = nullptr;  // null: append_request_line
  std::mutex* fd_lock = nullptr;
};

class RequestLog {
 public:
  using Batch = std::vector<RequestRecord>;
  static constexpr std::size_t kBatchRecords = 256;
  static constexpr std::size_t kBatchBytes = kBatchRecords * sizeof(RequestRecord);
  static constexpr std::size_t kDefaultQueueBytes = 8u << 20;
  static constexpr std::size_t kTextBytes = 1u << 20;  // written at least this often
  static constexpr int kWakeMs = 100;

  // Takes ownership of `fd` (open for writing, empty); `name` names it in errors. `workers`
  // threads will hand over batches. Reserves from `budget` (null: unbounded). Starts the writer
  // thread (std::system_error if the system refuses it).
  RequestLog(int fd, std::string name, std::size_t queue_bytes, int workers, std::shared_ptr<MemoryBudget> budget,
             RequestLogOutput output = {});
  ~RequestLog();  // finish()
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  // A worker's own batch, empty, with room for kBatchRecords (none when nothing was reserved).
  Batch first_batch();
  // Queues `batch`'s records for the file and leaves `batch` empty, with room again when the
  // pool has a free buffer. Returns how many records were dropped instead (the writer is behind,
  // or nothing was reserved).
  std::size_t hand_over(Batch& batch);
  // Writes whatever is queued, stops the writer and closes the file: "" or why a write failed.
  // Only the first call does anything.
  std::string finish();

  std::uint64_t lines_written() const;
  std::size_t reserved_bytes() const { return held_.bytes(); }
  std::size_t queue_buffers() const { return pool_size_; }

 private:
  void reserve(std::size_t queue_bytes, int workers, bool bounded);
  void run();
  void write_batches(std::vector<Batch>& batches, std::string& text, std::uint64_t& lines);
  void write_text(std::string& text, std::uint64_t& lines);

  const int fd_;
  const std::string name_;
  const RequestLogOutput output_;
  MemoryReservation held_;
  std::size_t pool_size_ = 0;     // batch buffers the queue may use
  std::size_t worker_batches_ = 0;  // first_batch() calls the reservation covers

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Batch> queued_;     // handed over, not yet written
  std::vector<Batch> spare_;      // empty, ready for a worker
  std::size_t made_ = 0;          // pool buffers allocated so far (queued, spare or being written)
  std::size_t handed_out_ = 0;    // first_batch() calls so far
  bool stopping_ = false;
  std::uint64_t written_ = 0;     // lines
  std::string error_;             // the first write error; later lines are dropped
  std::thread thread_;
  bool finished_ = false;
};

}  // namespace runara
