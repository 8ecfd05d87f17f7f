#include "ssh/sftp_transfer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "base/text.hpp"
#include "base/run_output.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace runara::ssh {

namespace {

namespace fs = std::filesystem;

std::string sftp_status_text(unsigned long code) {
  switch (code) {
    case LIBSSH2_FX_NO_SUCH_FILE: return "no such file";
    case LIBSSH2_FX_PERMISSION_DENIED: return "permission denied";
    case LIBSSH2_FX_NO_SUCH_PATH: return "no such path";
    case LIBSSH2_FX_FILE_ALREADY_EXISTS: return "already exists";
    case LIBSSH2_FX_WRITE_PROTECT: return "write protected";
    case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM: return "no space left";
    case LIBSSH2_FX_QUOTA_EXCEEDED: return "quota exceeded";
    case LIBSSH2_FX_NOT_A_DIRECTORY: return "not a folder";
    case LIBSSH2_FX_FAILURE: return "failure";
    default: return "SFTP status " + std::to_string(code);
  }
}

double now_s() { return static_cast<double>(uv_hrtime()) / 1e9; }

unsigned c_len(const std::string& s) { return static_cast<unsigned>(s.size()); }

}  // namespace

Result<std::unique_ptr<SftpTransfer>> SftpTransfer::start(SshSession& session, TransferOptions options, Done done) {
  if (!session.ready()) return Error{"transfer: the SSH session to " + session.where() + " is not connected"};
  return std::unique_ptr<SftpTransfer>(new SftpTransfer(session, std::move(options), std::move(done)));
}

SftpTransfer::SftpTransfer(SshSession& session, TransferOptions options, Done done)
    : session_(&session), options_(std::move(options)), done_(std::move(done)), started_(now_s()) {
  if (options_.block_bytes < 32768) options_.block_bytes = 32768;
  // A block must be longer than what masking holds back of it.
  options_.block_bytes = std::max(options_.block_bytes, 2 * options_.mask.longest());
  id_ = session_->attach(this);
}

SftpTransfer::~SftpTransfer() {
  *alive_ = false;
  // Gone mid-start: the session finishes starting SFTP, then shuts that SFTP down again.
  auto finish_open = [raw = session_ ? session_->raw() : nullptr, sftp = static_cast<LIBSSH2_SFTP*>(nullptr)]() mutable {
    if (!sftp) {
      sftp = libssh2_sftp_init(raw);
      if (!sftp) return libssh2_session_last_errno(raw) != LIBSSH2_ERROR_EAGAIN;
    }
    return libssh2_sftp_shutdown(sftp) != LIBSSH2_ERROR_EAGAIN;
  };
  if (session_) session_->detach(id_, phase_ == Phase::Init ? std::function<bool()>(finish_open) : nullptr);
  // Gone mid-copy: the session closes the remote file and the SFTP subsystem (libssh2 frees
  // them only then).
  if (session_ && (file_ || sftp_)) {
    session_->adopt([file = file_, sftp = sftp_]() mutable {
      if (file) {
        if (libssh2_sftp_close_handle(file) == LIBSSH2_ERROR_EAGAIN) return false;
        file = nullptr;
      }
      if (sftp) {
        if (libssh2_sftp_shutdown(sftp) == LIBSSH2_ERROR_EAGAIN) return false;
        sftp = nullptr;
      }
      return true;
    });
  }
  abandon_io();
  if (local_fd_ >= 0) ::close(local_fd_);
  if (root_fd_ >= 0) ::close(root_fd_);
}

SftpTransfer::Step SftpTransfer::step() {
  auto alive = alive_;  // a failure may finish the transfer, and `done` may destroy it
  bool progressed = false;
  if (phase_ == Phase::Init && init()) progressed = true;
  if (!*alive) return Step::Progress;
  if (phase_ == Phase::Plan && plan()) progressed = true;
  if (!*alive) return Step::Progress;
  if (phase_ == Phase::Work) work(progressed);
  if (!*alive) return Step::Progress;
  if (phase_ == Phase::Shutdown && shutdown()) {
    finish();
    return Step::Progress;
  }
  return progressed ? Step::Progress : Step::Blocked;
}

// Each of these returns false when it must wait (EAGAIN) or the transfer ended.
bool SftpTransfer::init() {
  if (!session_->take_open_turn(id_)) return false;
  sftp_ = libssh2_sftp_init(session_->raw());
  if (!sftp_) {
    if (libssh2_session_last_errno(session_->raw()) == LIBSSH2_ERROR_EAGAIN) return false;
    session_->release_open_turn(id_);
    return sftp_failed("cannot start SFTP on", session_->where());
  }
  session_->release_open_turn(id_);
  session_->note_command_started();
  phase_ = Phase::Plan;
  return true;
}

bool SftpTransfer::plan() {
  using Kind = Job::Kind;
  if (options_.direction == TransferOptions::Direction::Upload) {
    std::error_code ec;
    const auto status = fs::symlink_status(options_.local, ec);
    if (ec || !fs::exists(status)) return local_failed("cannot read", options_.local, ENOENT);
    if (fs::is_directory(status)) {
      jobs_.push_back({Kind::MakeRemoteDir, options_.local, options_.remote,
                       static_cast<unsigned>(status.permissions()) & 07777});
      for (const auto& entry : fs::recursive_directory_iterator(options_.local, ec)) {
        const std::string rel = fs::relative(entry.path(), options_.local).string();
        // symlink_status: a link in the tree is skipped, never followed to what it names.
        const auto st = entry.symlink_status();
        const auto perms = static_cast<unsigned>(st.permissions()) & 07777;
        const std::string remote = options_.remote + "/" + rel;
        if (fs::is_directory(st)) jobs_.push_back({Kind::MakeRemoteDir, entry.path().string(), remote, perms});
        else if (fs::is_regular_file(st)) jobs_.push_back({Kind::Upload, entry.path().string(), remote, perms});
      }
      if (ec) return local_failed("cannot list", options_.local, ec.value());
    } else {
      jobs_.push_back({Kind::Upload, options_.local, options_.remote, 0});
    }
  } else {
    LIBSSH2_SFTP_ATTRIBUTES attrs{};
    const int rc = libssh2_sftp_stat_ex(sftp_, options_.remote.c_str(), c_len(options_.remote), LIBSSH2_SFTP_STAT, &attrs);
    if (rc == LIBSSH2_ERROR_EAGAIN) return false;
    if (rc < 0) return sftp_failed("cannot read", options_.remote);
    const unsigned perms = attrs.permissions & 07777;
    if (LIBSSH2_SFTP_S_ISDIR(attrs.permissions)) {
      jobs_.push_back({Kind::MakeLocalDir, options_.local, options_.remote, perms});
      jobs_.push_back({Kind::RemoteTree, options_.local, options_.remote, perms});
    } else {
      jobs_.push_back({Kind::Download, options_.local, options_.remote, perms});
    }
  }
  phase_ = Phase::Work;
  return true;
}

bool SftpTransfer::work(bool& progressed) {
  // One block per step at most: other channels and loop work get their turn.
  while (!jobs_.empty()) {
    const Job job = jobs_.front();
    bool ok = false;
    switch (job.kind) {
      case Job::Kind::MakeRemoteDir: ok = make_remote_dir(job); break;
      case Job::Kind::MakeLocalDir: {
        const int fd = open_local(job.local, O_DIRECTORY);
        if (fd < 0) return false;
        ::fchmod(fd, job.mode);
        if (job.local == options_.local) root_fd_ = fd;
        else ::close(fd);
        next_job();
        ok = true;
        break;
      }
      case Job::Kind::RemoteTree: ok = list_remote(job); break;
      case Job::Kind::Upload: return upload(job, progressed);
      case Job::Kind::Download: return download(job, progressed);
      case Job::Kind::LocalTree: next_job(); ok = true; break;
    }
    if (!ok) return false;
    progressed = true;
  }
  phase_ = Phase::Shutdown;
  return true;
}

void SftpTransfer::next_job() {
  jobs_.pop_front();
  step_ = 0;
  buffered_ = sent_ = 0;
  file_done_ = file_size_ = 0;
  eof_ = false;
}

bool SftpTransfer::make_remote_dir(const Job& job) {
  const int rc = libssh2_sftp_mkdir_ex(sftp_, job.remote.c_str(), c_len(job.remote), static_cast<long>(job.mode));
  if (rc == LIBSSH2_ERROR_EAGAIN) return false;
  // An existing folder is fine (OpenSSH answers "failure" rather than "already exists").
  if (rc < 0 && rc != LIBSSH2_ERROR_SFTP_PROTOCOL) return sftp_failed("cannot create the folder", job.remote);
  next_job();
  return true;
}

bool SftpTransfer::list_remote(const Job& job) {
  if (step_ == 0) {
    file_ = libssh2_sftp_open_ex(sftp_, job.remote.c_str(), c_len(job.remote), 0, 0, LIBSSH2_SFTP_OPENDIR);
    if (!file_) {
      if (libssh2_session_last_errno(session_->raw()) == LIBSSH2_ERROR_EAGAIN) return false;
      return sftp_failed("cannot list", job.remote);
    }
    step_ = 1;
  }
  while (step_ == 1) {
    char name[1024];
    LIBSSH2_SFTP_ATTRIBUTES attrs{};
    const int n = libssh2_sftp_readdir_ex(file_, name, sizeof name, nullptr, 0, &attrs);
    if (n == LIBSSH2_ERROR_EAGAIN) return false;
    if (n < 0) return sftp_failed("cannot list", job.remote);
    if (n == 0) {
      step_ = 2;
      break;
    }
    const std::string entry(name, static_cast<std::size_t>(n));
    if (entry == "." || entry == "..") continue;
    // The server is the script's: a name is one path part, never a way out of the folder.
    if (entry.empty() || entry.find('/') != std::string::npos || entry.find('\0') != std::string::npos)
      return refuse("transfer: the server listed the entry name '" + printable(entry, 200) + "' in '" + job.remote +
                    "'; expected one path part (no '/' or NUL)");
    const unsigned perms = attrs.permissions & 07777;
    const std::string local = job.local + "/" + entry, remote = job.remote + "/" + entry;
    // Symlinks and special files are skipped: only what a readdir calls a folder or a file.
    if (LIBSSH2_SFTP_S_ISDIR(attrs.permissions)) {
      jobs_.push_back({Job::Kind::MakeLocalDir, local, remote, perms});
      jobs_.push_back({Job::Kind::RemoteTree, local, remote, perms});
    } else if (LIBSSH2_SFTP_S_ISREG(attrs.permissions)) {
      jobs_.push_back({Job::Kind::Download, local, remote, perms});
    }
  }
  if (!close_file()) return false;
  next_job();
  return true;
}

bool SftpTransfer::upload(const Job& job, bool& progressed) {
  if (step_ == 0) {
    // O_NONBLOCK: opening a FIFO must not block the loop; S_ISREG then refuses it.
    local_fd_ = ::open(job.local.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st {};
    if (local_fd_ < 0 || ::fstat(local_fd_, &st) != 0) return local_failed("cannot read", job.local);
    if (!S_ISREG(st.st_mode)) return local_failed("cannot upload (not a regular file)", job.local, EINVAL);
    file_size_ = static_cast<std::uint64_t>(st.st_size);
    file_mode_ = st.st_mode & 07777;
    for (auto& b : buffers_) b->resize(options_.block_bytes);
    buffered_ = sent_ = 0;
    eof_ = false;
    step_ = 1;
  }
  if (step_ == 1) {
    file_ = libssh2_sftp_open_ex(sftp_, job.remote.c_str(), c_len(job.remote),
                                 LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC,
                                 static_cast<long>(file_mode_), LIBSSH2_SFTP_OPENFILE);
    if (!file_) {
      if (libssh2_session_last_errno(session_->raw()) == LIBSSH2_ERROR_EAGAIN) return false;
      return sftp_failed("cannot create", job.remote);
    }
    step_ = 2;
  }
  // Two buffers: one is sent while the next block is read into the other on the thread pool.
  while (step_ == 2) {
    if (sent_ == buffered_) {  // this block is sent
      if (eof_) {
        step_ = 3;
        break;
      }
      if (io_) return false;  // the next block is still being read
      if (!io_ready_) {       // nothing read ahead yet (the first block)
        start_io(cur_ ^ 1, false, 0, buffers_[cur_ ^ 1]->size());
        continue;
      }
      io_ready_ = false;
      if (io_result_ < 0) return local_failed("cannot read", job.local, static_cast<int>(-io_result_));
      cur_ ^= 1;
      buffered_ = static_cast<std::size_t>(io_result_);
      sent_ = 0;
      eof_ = io_result_ == 0;
      if (!eof_) start_io(cur_ ^ 1, false, 0, buffers_[cur_ ^ 1]->size());  // read ahead
      continue;
    }
    // A large buffer: libssh2 splits it into many write requests in flight at once.
    const ssize_t n = libssh2_sftp_write(file_, buffers_[cur_]->data() + sent_, buffered_ - sent_);
    if (n == LIBSSH2_ERROR_EAGAIN) return false;
    if (n < 0) return sftp_failed("cannot write", job.remote);
    sent_ += static_cast<std::size_t>(n);
    file_done_ += static_cast<std::uint64_t>(n);
    result_.bytes += static_cast<std::uint64_t>(n);
    progressed = true;
    report(job.remote);
    if (sent_ == buffered_) return false;  // a block per step: come back for the next
  }
  if (step_ == 3) {  // the mode exactly, whatever the server's umask made of the open's
    LIBSSH2_SFTP_ATTRIBUTES attrs{};
    attrs.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS;
    attrs.permissions = file_mode_;
    const int rc = libssh2_sftp_fsetstat(file_, &attrs);
    if (rc == LIBSSH2_ERROR_EAGAIN) return false;
    if (rc < 0) return sftp_failed("cannot set the mode of", job.remote);
    step_ = 4;
  }
  if (!close_file()) return false;
  ::close(local_fd_);
  local_fd_ = -1;
  ++result_.files;
  next_job();
  progressed = true;
  return true;
}

bool SftpTransfer::download(const Job& job, bool& progressed) {
  if (step_ == 0) {
    file_ = libssh2_sftp_open_ex(sftp_, job.remote.c_str(), c_len(job.remote), LIBSSH2_FXF_READ, 0,
                                 LIBSSH2_SFTP_OPENFILE);
    if (!file_) {
      if (libssh2_session_last_errno(session_->raw()) == LIBSSH2_ERROR_EAGAIN) return false;
      return sftp_failed("cannot read", job.remote);
    }
    step_ = 1;
  }
  if (step_ == 1) {
    LIBSSH2_SFTP_ATTRIBUTES attrs{};
    const int rc = libssh2_sftp_fstat_ex(file_, &attrs, 0);
    if (rc == LIBSSH2_ERROR_EAGAIN) return false;
    if (rc < 0) return sftp_failed("cannot read", job.remote);
    file_size_ = attrs.filesize;
    file_mode_ = attrs.permissions & 07777;
    local_fd_ = open_local(job.local, O_WRONLY | O_CREAT | O_TRUNC);
    if (local_fd_ < 0) return false;
    // Twice the block: libssh2 keeps requests in flight for as much as the call has room for,
    // so the room never drops below a block while one fills (the pipeline never runs dry).
    for (auto& b : buffers_) b->resize(2 * options_.block_bytes);
    filled_ = pending_ = 0;
    eof_ = false;
    step_ = 2;
  }
  // Two buffers: one fills from SFTP while the other is written to disk on the thread pool.
  while (step_ == 2) {
    if (io_ready_) {  // a block's write ended
      io_ready_ = false;
      if (io_result_ < 0) return local_failed("cannot write", job.local, static_cast<int>(-io_result_));
      written_ += static_cast<std::size_t>(io_result_);
      if (written_ < pending_) {  // a short write: the rest
        start_io(cur_ ^ 1, true, written_, pending_ - written_);
        continue;
      }
      if (carry_ > 0) {  // the held-back tail, masked with its block, opens the next block
        std::memcpy(buffers_[cur_]->data(), buffers_[cur_ ^ 1]->data() + pending_, carry_);
        carry_ = 0;
      }
      file_done_ += pending_;
      result_.bytes += pending_;
      pending_ = 0;
      progressed = true;
      report(job.local);
      continue;
    }
    if (!eof_ && filled_ < options_.block_bytes) {
      // A large buffer: libssh2 keeps several read requests in flight to fill it.
      const ssize_t n = libssh2_sftp_read(file_, buffers_[cur_]->data() + filled_, buffers_[cur_]->size() - filled_);
      if (n == LIBSSH2_ERROR_EAGAIN) return false;
      if (n < 0) return sftp_failed("cannot read", job.remote);
      if (n == 0) eof_ = true;
      filled_ += static_cast<std::size_t>(n);
      progressed = progressed || n > 0;
      continue;
    }
    if (io_) return false;  // a block is in (or the end), and the other buffer is still being written
    if (filled_ == 0) {
      step_ = 3;  // the end, all written
      break;
    }
    if (options_.mask.empty()) {
      pending_ = filled_;
      written_ = 0;
      filled_ = 0;
      start_io(cur_, true, 0, pending_);
      cur_ ^= 1;
      continue;
    }
    // Masked: the tail a value could start in waits for the next block (its room is kept at
    // the start of the other buffer, filled when this write ends), unless the file ended.
    carry_ = eof_ ? 0 : options_.mask.longest() - 1;
    pending_ = filled_ - carry_;
    written_ = 0;
    start_masked_write(cur_, filled_, pending_);
    filled_ = carry_;
    cur_ ^= 1;
  }
  if (!close_file()) return false;
  ::fchmod(local_fd_, file_mode_);
  ::close(local_fd_);
  local_fd_ = -1;
  ++result_.files;
  next_job();
  progressed = true;
  return true;
}

bool SftpTransfer::close_file() {
  if (!file_) return true;
  const int rc = libssh2_sftp_close_handle(file_);
  if (rc == LIBSSH2_ERROR_EAGAIN) return false;
  file_ = nullptr;
  return true;
}

bool SftpTransfer::shutdown() {
  if (!close_file()) return false;
  if (sftp_ && libssh2_sftp_shutdown(sftp_) == LIBSSH2_ERROR_EAGAIN) return false;
  sftp_ = nullptr;
  return true;
}

bool SftpTransfer::sftp_failed(const std::string& what, const std::string& path) {
  const int rc = libssh2_session_last_errno(session_->raw());
  if (session_->fatal(rc)) return false;  // lost() finished us
  const std::string why = rc == LIBSSH2_ERROR_SFTP_PROTOCOL && sftp_ ? sftp_status_text(libssh2_sftp_last_error(sftp_))
                                                                     : session_->last_error();
  result_.error = what + " '" + path + "': " + why;
  jobs_.clear();
  phase_ = Phase::Shutdown;
  return false;
}

bool SftpTransfer::refuse(const std::string& error) {
  result_.error = error;
  jobs_.clear();
  phase_ = Phase::Shutdown;
  return false;
}

// The destination the caller named is taken as given (its last part must not be a symlink);
// everything below it is reached from its descriptor one part at a time, so a symlink planted
// in the tree never redirects a write. -1 when it failed (the transfer is ending).
int SftpTransfer::open_local(const std::string& local, int flags) {
  if (local == options_.local) {
    if (flags & O_DIRECTORY) {
      std::error_code ec;
      fs::create_directories(local, ec);
      if (ec) return local_failed("cannot create the folder", local, ec.value()), -1;
      const int fd = ::open(local.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) return local_failed("cannot open the folder", local), -1;
      return fd;
    }
    const int fd = ::open(local.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return local_failed("cannot write", local), -1;
    return fd;
  }
  std::string error;
  const int fd = root_fd_ < 0 ? -1 : open_beneath(root_fd_, local.substr(options_.local.size() + 1), flags, error);
  if (fd < 0) return refuse("transfer: " + (error.empty() ? "cannot write '" + local + "'" : error) + " (below '" +
                            options_.local + "')"), -1;
  return fd;
}

bool SftpTransfer::local_failed(const std::string& what, const std::string& path, int err) {
  if (err == 0) err = errno ? errno : EIO;
  result_.error = what + " '" + path + "' (local): " + std::strerror(err);
  jobs_.clear();
  phase_ = Phase::Shutdown;
  return false;
}

// One block's read or write on libuv's thread pool. It holds the buffer, and once the transfer
// is gone (owner null) it also closes the file, so the descriptor is never reused under it.
struct SftpTransfer::LocalIo {
  uv_fs_t req{};
  uv_work_t work{};  // a masked write instead: mask, then write, both on the thread pool
  std::shared_ptr<std::string> buffer;
  SftpTransfer* owner = nullptr;
  int orphan_fd = -1;
  // A masked write's inputs and result.
  SecretMask mask;
  int fd = -1;
  std::size_t masked = 0, length = 0;
  long long result = 0;

  // Back on the loop: hands the result to the transfer, or closes the file it was left.
  static void finished(LocalIo* io, long long result) {
    if (SftpTransfer* t = io->owner) {
      t->io_ = nullptr;
      t->io_ready_ = true;
      t->io_result_ = result;
      if (t->session_) t->session_->wake();
    }
    if (io->orphan_fd >= 0) ::close(io->orphan_fd);
    delete io;
  }
};

void SftpTransfer::start_io(int buffer, bool write, std::size_t offset, std::size_t length) {
  auto* io = new LocalIo;
  io->buffer = buffers_[buffer];
  io->owner = this;
  io->req.data = io;
  uv_buf_t buf = uv_buf_init(io->buffer->data() + offset, static_cast<unsigned>(length));
  auto done = [](uv_fs_t* req) {
    auto* io = static_cast<LocalIo*>(req->data);
    const auto result = static_cast<long long>(req->result);
    uv_fs_req_cleanup(req);
    LocalIo::finished(io, result);
  };
  uv_loop_t* loop = session_->loop();
  const int rc = write ? uv_fs_write(loop, &io->req, local_fd_, &buf, 1, -1, done)
                       : uv_fs_read(loop, &io->req, local_fd_, &buf, 1, -1, done);
  if (rc < 0) {  // not even queued: the result is the error, seen at once
    delete io;
    io_ready_ = true;
    io_result_ = rc;
    return;
  }
  io_ = io;
}

// Masks buffer[0, masked) and writes buffer[0, length) at the file's position, on the thread pool:
// masking a 4 MiB block takes milliseconds, too long for the loop thread. The result is `length`
// or -errno, never a short count.
void SftpTransfer::start_masked_write(int buffer, std::size_t masked, std::size_t length) {
  auto* io = new LocalIo;
  io->buffer = buffers_[buffer];
  io->owner = this;
  io->mask = options_.mask;
  io->fd = local_fd_;
  io->masked = masked;
  io->length = length;
  io->work.data = io;
  auto work = [](uv_work_t* req) {
    auto* io = static_cast<LocalIo*>(req->data);
    char* data = io->buffer->data();
    io->mask.apply(data, io->masked);
    std::size_t done = 0;
    while (done < io->length) {
      const ssize_t n = ::write(io->fd, data + done, io->length - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        io->result = -errno;
        return;
      }
      done += static_cast<std::size_t>(n);
    }
    io->result = static_cast<long long>(done);
  };
  auto after = [](uv_work_t* req, int status) {
    auto* io = static_cast<LocalIo*>(req->data);
    LocalIo::finished(io, status < 0 ? status : io->result);
  };
  const int rc = uv_queue_work(session_->loop(), &io->work, work, after);
  if (rc < 0) {
    delete io;
    io_ready_ = true;
    io_result_ = rc;
    return;
  }
  io_ = io;
}

// The transfer ends with a block in flight: the request keeps the buffer and closes the file.
void SftpTransfer::abandon_io() {
  if (io_ == nullptr) return;
  io_->owner = nullptr;
  io_->orphan_fd = local_fd_;
  local_fd_ = -1;
  io_ = nullptr;
}

void SftpTransfer::report(const std::string& path) {
  if (options_.progress) options_.progress(path, file_done_, file_size_, result_.bytes);
}

void SftpTransfer::lost(const std::string& error) {
  // The link is cut: these fail fast, and free what they can.
  if (file_) libssh2_sftp_close_handle(file_);
  if (sftp_) libssh2_sftp_shutdown(sftp_);
  file_ = nullptr;
  sftp_ = nullptr;
  session_ = nullptr;
  if (phase_ == Phase::Done) return;
  if (result_.error.empty()) result_.error = error;
  finish();
}

void SftpTransfer::finish() {
  if (phase_ == Phase::Done) return;
  phase_ = Phase::Done;
  if (session_) session_->detach(id_);
  abandon_io();
  if (local_fd_ >= 0) ::close(local_fd_);
  local_fd_ = -1;
  if (root_fd_ >= 0) ::close(root_fd_);
  root_fd_ = -1;
  result_.seconds = now_s() - started_;
  Done done = std::move(done_);  // `done` may destroy this transfer
  if (done) done(result_);
}

}  // namespace runara::ssh
