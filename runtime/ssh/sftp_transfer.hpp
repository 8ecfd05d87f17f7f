// Copies a file or a whole folder over SFTP, upload or download, on an SSH session: requests
// are pipelined (large buffers handed to libssh2, which keeps many requests in flight), file
// modes are kept, folders are walked recursively, and progress is reported as bytes move.
//
// Contract. Threading: all calls and callbacks on the session's loop thread; the network never
// blocks it, and neither does the local disk: blocks of `block_bytes` are read or written on
// libuv's thread pool (uv_fs) while the previous one moves over SFTP (two buffers; a download's
// are twice the block, so libssh2 always has a block's worth of reads in flight). Opening,
// fstat, fchmod and closing stay on the loop: metadata, and FIFOs are opened non-blocking and
// refused. A transfer destroyed mid-copy hands its open SFTP handles to the session to close. Ownership: the caller owns the transfer; the session must outlive it. `done` is
// called exactly once (unless destroyed first), as the transfer's last act, so it may destroy
// it; `progress` must not. Paths are used as given: the sandbox decides what may be read or
// written before a transfer is made. One SFTP subsystem channel per transfer.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include <libssh2_sftp.h>

#include "runara/secret_mask.hpp"
#include "ssh/session.hpp"

namespace runara::ssh {

struct TransferOptions {
  enum class Direction { Upload, Download } direction = Direction::Upload;
  std::string local, remote;         // a file or a folder (copied with everything below it)
  std::size_t block_bytes = 4u << 20;  // handed to libssh2 per call: its pipeline depth
  // Downloads: masked with this before they are written (the run's secrets), block by block on
  // the thread pool; the last longest()-1 bytes of a block wait for the next, so a value split
  // between two blocks is masked too. Empty: written as received.
  SecretMask mask;
  // Bytes of the current file done and its size, and of the whole transfer so far.
  std::function<void(const std::string& path, std::uint64_t file_done, std::uint64_t file_size,
                     std::uint64_t total_done)>
      progress;
};

struct TransferResult {
  std::uint64_t bytes = 0;
  int files = 0;
  double seconds = 0;
  std::string error;  // "" on success; else what failed, on which path (the copy is partial)
};

class SftpTransfer final : public Stepper {
 public:
  using Done = std::function<void(const TransferResult&)>;
  // Starts at once, or fails (nothing sent) when the session is not ready.
  static Result<std::unique_ptr<SftpTransfer>> start(SshSession& session, TransferOptions options, Done done);
  ~SftpTransfer() override;
  SftpTransfer(const SftpTransfer&) = delete;
  SftpTransfer& operator=(const SftpTransfer&) = delete;

  Step step() override;
  void lost(const std::string& error) override;

 private:
  struct Job {
    enum class Kind { LocalTree, RemoteTree, MakeRemoteDir, MakeLocalDir, Upload, Download } kind;
    std::string local, remote;
    unsigned mode = 0644;
  };
  enum class Phase { Init, Plan, Work, Shutdown, Done };
  SftpTransfer(SshSession& session, TransferOptions options, Done done);
  bool init();
  bool plan();
  bool work(bool& progressed);
  bool list_remote(const Job& job);
  bool make_remote_dir(const Job& job);
  bool upload(const Job& job, bool& progressed);
  bool download(const Job& job, bool& progressed);
  bool close_file();
  bool shutdown();
  bool sftp_failed(const std::string& what, const std::string& path);
  bool local_failed(const std::string& what, const std::string& path, int err = 0);  // 0: errno
  bool refuse(const std::string& error);
  int open_local(const std::string& local, int flags);
  void next_job();
  void report(const std::string& path);
  void finish();
  struct LocalIo;
  void start_io(int buffer, bool write, std::size_t offset, std::size_t length);
  void start_masked_write(int buffer, std::size_t masked, std::size_t length);
  void abandon_io();

  SshSession* session_;
  TransferOptions options_;
  Done done_;
  std::uint64_t id_ = 0;
  Phase phase_ = Phase::Init;
  LIBSSH2_SFTP* sftp_ = nullptr;
  LIBSSH2_SFTP_HANDLE* file_ = nullptr;  // the remote file or folder open now
  int local_fd_ = -1;
  int root_fd_ = -1;  // the download's destination folder: everything below is opened from it
  std::deque<Job> jobs_;
  // The current file: where it stands.
  int step_ = 0;
  // Two blocks, each shared with a request in flight (which may outlive the transfer): one moves
  // over SFTP (buffers_[cur_]) while the other is read or written on the thread pool.
  std::shared_ptr<std::string> buffers_[2] = {std::make_shared<std::string>(), std::make_shared<std::string>()};
  int cur_ = 0;
  std::size_t buffered_ = 0, sent_ = 0;  // upload: the block being sent
  std::size_t filled_ = 0;               // download: what SFTP has put in buffers_[cur_]
  LocalIo* io_ = nullptr;          // the block being read or written on the thread pool
  bool io_ready_ = false;          // a request ended: io_result_ is its result (bytes, or -errno)
  long long io_result_ = 0;
  std::size_t pending_ = 0, written_ = 0;  // download: the block being written, and how much is
  std::size_t carry_ = 0;  // download: bytes after pending_ held back for the next block (masking)
  std::uint64_t file_done_ = 0, file_size_ = 0;
  unsigned file_mode_ = 0644;
  bool eof_ = false;
  double started_ = 0;
  TransferResult result_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace runara::ssh
