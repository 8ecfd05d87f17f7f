#include <algorithm>
#include "base/run_output.hpp"
#include "base/files.hpp"


#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <vector>

namespace runara {

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kMaxSuffix = 100;  // results/<stamp>-<name>-2 ... -100

std::string why(const std::string& what) { return what + ": " + std::strerror(errno); }

// Opens `name` below `parent` as a folder, creating it if missing. A symlink is refused
// (O_NOFOLLOW gives ELOOP or ENOTDIR), so it never leads anywhere else.
// `made` says whether the folder is new (only a new folder is marked as an output folder: a
// marker left in a folder the user chose with --out, `.` or `~`, would make later runs refuse to
// read anything below it).
int open_or_make_dir(int parent, const std::string& name, bool& made, std::string& error) {
  made = mkdirat(parent, name.c_str(), 0755) == 0;
  if (!made && errno != EEXIST) {
    error = why("cannot create folder '" + name + "'");
    return -1;
  }
  const int fd = openat(parent, name.c_str(), kDirFlags);
  if (fd < 0) {
    error = errno == ELOOP || errno == ENOTDIR ? "'" + name + "' is a symlink or not a folder"
                                               : why("cannot open folder '" + name + "'");
  }
  return fd;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string utc_stamp() {
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  return stamp;
}

// Leaves kOutputMarker in an output folder this run made.
void mark(int dir_fd) {
  const int fd = openat(dir_fd, kOutputMarker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return;
  write_all(fd, "This folder holds the output of a runara run. Scripts may not read anything in it:\n"
                "runara masks secrets in what it writes here, and reading that back would reveal them.\n");
  ::close(fd);
}

}  // namespace

bool inside_output_folder(const std::string& path) {
  for (std::size_t slash = path.rfind('/'); slash != std::string::npos && slash > 0; slash = path.rfind('/', slash - 1)) {
    const std::string marker = path.substr(0, slash) + "/" + kOutputMarker;
    if (access(marker.c_str(), F_OK) == 0) return true;
  }
  return false;
}

bool starts_with_reserved_name(const std::string& relative) {
  const std::string first = relative.substr(0, relative.find('/'));
  return first == "run.log" || first == "results.json" || first == kOutputMarker;
}

bool RunOutput::holds(const std::string& real) const {
  return (created() && path_within(real, real_path())) || inside_output_folder(real);
}

RunOutput::~RunOutput() { close(); }

void RunOutput::configure(const std::string& requested, const std::string& script_name) {
  fresh_name_ = requested.empty();
  dir_ = fresh_name_ ? "results/" + utc_stamp() + "-" + script_name : requested;
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

const std::string& RunOutput::dir() {
  if (!tried_) {
    tried_ = true;
    error_ = create();
    if (!error_.empty()) error_ = "cannot create the output folder '" + dir_ + "': " + error_;
    if (made_ && on_created) on_created();
  }
  return dir_;
}

// The default folder: results/ (made if missing, never a symlink), then a name that did not
// exist before, made with mkdirat so that an existing entry — a planted symlink — is skipped.
// --out: its parents as given, the folder itself made or reused, but never a symlink.
std::string RunOutput::create() {
  const std::size_t slash = dir_.rfind('/');
  const std::string parent = slash == std::string::npos ? "." : dir_.substr(0, slash == 0 ? 1 : slash);
  std::string name = slash == std::string::npos ? dir_ : dir_.substr(slash + 1);
  std::string error;
  const int parent_fd = open_parent(parent, error);
  if (parent_fd < 0) return error;
  if (fresh_name_) {
    error = make_fresh(parent_fd, name);
    dir_ = parent + "/" + name;
  }
  bool made = fresh_name_;
  if (error.empty()) {
    bool made_now = false;
    fd_ = open_or_make_dir(parent_fd, name, made_now, error);
    made = made || made_now;
    if (fd_ < 0 && error.find("symlink") != std::string::npos) error += "; runara never writes through a symlinked output folder";
  }
  ::close(parent_fd);
  if (fd_ >= 0) adopt(made);
  return error;
}

int RunOutput::open_parent(const std::string& parent, std::string& error) {
  if (!fresh_name_ && parent != "." && parent != "/") {
    if ((error = make_dirs(parent)); !error.empty()) return -1;
  }
  if (fresh_name_ && mkdir(parent.c_str(), 0755) == 0) made_parent_ = true;  // results/, if missing
  const int fd = open(parent.c_str(), fresh_name_ ? kDirFlags : O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) return fd;
  error = errno == ELOOP || errno == ENOTDIR
              ? "'" + parent + "' is a symlink or not a folder; runara only writes into a folder it made (choose one with --out)"
              : why("cannot open '" + parent + "'");
  return -1;
}

// Makes `name` (or name-2, name-3, ...) below `parent_fd`; never an entry that existed.
std::string RunOutput::make_fresh(int parent_fd, std::string& name) {
  const std::string base = name;
  for (int n = 2; mkdirat(parent_fd, name.c_str(), 0755) != 0; ++n) {
    if (errno != EEXIST || n > kMaxSuffix) return why("cannot create '" + name + "'");
    name = base + "-" + std::to_string(n);
  }
  return {};
}

// The folder is open: mark it if this run made it (a reused --out folder is guarded through
// real_path() while the run lasts), and remember where it really is (from the descriptor, not
// the path, so that it names the folder actually opened).
void RunOutput::adopt(bool made_here) {
  made_ = true;
  made_here_ = made_here;
  if (made_here) mark(fd_);
  char resolved[PATH_MAX];
  const std::string link = "/proc/self/fd/" + std::to_string(fd_);
  const ssize_t n = readlink(link.c_str(), resolved, sizeof resolved - 1);
  if (n > 0) {
    real_.assign(resolved, static_cast<std::size_t>(n));
  } else {
    real_ = realpath(dir_.c_str(), resolved) ? resolved : dir_;
  }
}

int RunOutput::dup_dir_fd() const { return fd_ < 0 ? -1 : fcntl(fd_, F_DUPFD_CLOEXEC, 0); }

void RunOutput::append_log(const std::string& line) {
  if (!log_) {
    dir();
    if (fd_ < 0) return;
    const int fd = openat(fd_, "run.log", O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return;
    log_ = fdopen(fd, "a");
    if (!log_) {
      ::close(fd);
      return;
    }
  }
  std::fputs(line.c_str(), log_);
  std::fputc('\n', log_);
  std::fflush(log_);
}

std::string RunOutput::write(const std::string& relative, const std::string& data) {
  dir();
  if (fd_ < 0) return error_.empty() ? "the output folder '" + dir_ + "' is already closed" : error_;
  const int fd = dup_dir_fd();
  if (fd < 0) return why("cannot write '" + relative + "'");
  std::string error = write_beneath(fd, relative, data);
  ::close(fd);
  return error;
}

// Opens (making them if missing) the first `count` of `parts` below `dir_fd`, one component
// at a time, never following a symlink; the last folder's descriptor, or -1 with `error`.
static int open_folders(int dir_fd, const std::vector<std::string>& parts, std::size_t count, std::string& error) {
  int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  for (std::size_t i = 0; fd >= 0 && i < count; ++i) {
    bool made = false;
    const int next = open_or_make_dir(fd, parts[i], made, error);
    ::close(fd);
    fd = next;
  }
  return fd;
}

int open_beneath(int dir_fd, const std::string& relative, int flags, std::string& error) {
  const std::vector<std::string> parts = split_path(relative);
  if (parts.empty() || std::find(parts.begin(), parts.end(), "..") != parts.end()) {
    error = "cannot open '" + relative + "': expected a name below the folder";
    return -1;
  }
  const bool dir = (flags & O_DIRECTORY) != 0;
  const int fd = open_folders(dir_fd, parts, dir ? parts.size() : parts.size() - 1, error);
  if (fd < 0) {
    error = "cannot open '" + relative + "': " + (error.empty() ? std::strerror(errno) : error);
    return -1;
  }
  if (dir) return fd;
  const int file = openat(fd, parts.back().c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (file < 0 && errno == ELOOP) error = "cannot open '" + relative + "': it is a symlink";
  else if (file < 0) error = why("cannot open '" + relative + "'");
  ::close(fd);
  return file;
}

std::string write_beneath(int dir_fd, const std::string& relative, const std::string& data) {
  const std::vector<std::string> parts = split_path(relative);
  if (parts.empty()) return "cannot write '" + relative + "': no file name";
  std::string error;
  const int fd = open_folders(dir_fd, parts, parts.size() - 1, error);
  if (fd < 0) return "cannot write '" + relative + "': " + (error.empty() ? std::strerror(errno) : error);
  const std::string& name = parts.back();
  const std::string tmp = name + ".tmp";
  const int file = openat(fd, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  bool ok = file >= 0 && write_all(file, data);
  if (file >= 0) ok = ::close(file) == 0 && ok;
  if (ok) ok = renameat(fd, tmp.c_str(), fd, name.c_str()) == 0;
  if (!ok) {
    error = why("cannot write '" + relative + "'");
    unlinkat(fd, tmp.c_str(), 0);
  }
  ::close(fd);
  return error;
}

void RunOutput::close() {
  if (log_) std::fclose(log_);
  log_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void RunOutput::discard() {
  close();
  if (!made_here_ || real_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(real_, ignored);  // symlinks inside are removed, never followed
  made_ = made_here_ = false;
  if (made_parent_) ::rmdir("results");  // only when empty
}

}  // namespace runara
