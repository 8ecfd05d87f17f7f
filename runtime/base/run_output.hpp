// The run's output folder: run.log, results.json and whatever the script writes with
// runara.write_file. Created on first use, so runs that write nothing leave nothing behind.
//
// Contract. The folder is made fresh for each run with mkdir (an existing path, a symlink
// included, is never adopted: the default name gets a -2, -3 ... suffix instead), then held
// open as a directory descriptor. Every later write goes through that descriptor, one path
// component at a time with O_NOFOLLOW, so nothing in the folder can redirect a write outside
// it. `--out DIR` may name an existing folder (the user's choice), never a symlink. The Lua
// thread calls configure/dir/append_log/close; write_beneath() is safe from any thread on a
// descriptor it owns (from dup_dir_fd()). Nothing here redacts: callers pass redacted text.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "base/files.hpp"  // most users of the folder want these too

namespace runara {

class RunOutput {
 public:
  RunOutput() = default;
  ~RunOutput();
  RunOutput(const RunOutput&) = delete;
  RunOutput& operator=(const RunOutput&) = delete;

  // `requested` empty: results/<UTC yyyymmdd-HHMMSS>-<name>/ under the current folder.
  void configure(const std::string& requested, const std::string& script_name);
  const std::string& dir();             // creates the folder on first call
  // Called once, inside that first call, when the folder exists (real_path() says where): the
  // run history records it as the run goes. It must not write to the folder's log (append_log
  // may be the call that is making the folder).
  std::function<void()> on_created;
  const std::string& error() const { return error_; }  // why it could not be created
  bool created() const { return made_; }
  // The folder's resolved absolute path ("" until created): reads of it are refused.
  const std::string& real_path() const { return real_; }
  // Whether `real` (a resolved path) lies in this run's output folder or an earlier run's
  // (marked): scripts may not read there, since what runara writes there is redacted.
  bool holds(const std::string& real) const;
  // A descriptor of the folder for one job to own and close; -1 if it does not exist.
  int dup_dir_fd() const;
  void append_log(const std::string& line);
  // Writes `data` to `relative` (normalised, checked) atomically; "" or an error message.
  std::string write(const std::string& relative, const std::string& data);
  void close();
  // Closes, then removes the folder and all in it if this run made it (a reused --out folder
  // stays), and results/ too if the run made that and it is empty: a run that ended on a
  // usage error before it did anything leaves nothing behind. Call after close-worthy writes.
  void discard();

 private:
  std::string create();
  int open_parent(const std::string& parent, std::string& error);
  static std::string make_fresh(int parent_fd, std::string& name);
  void adopt(bool made_here);

  std::string dir_, real_, error_;
  bool tried_ = false;
  bool made_ = false;
  bool made_here_ = false;    // the folder did not exist before this run
  bool made_parent_ = false;  // results/ did not exist before this run either
  bool fresh_name_ = false;  // the default name: try suffixes instead of failing
  int fd_ = -1;
  std::FILE* log_ = nullptr;
};

// Every output folder holds this file, so that it stays recognisable in later runs: a script
// may never read inside a folder that holds it (what runara wrote there is redacted).
inline constexpr const char* kOutputMarker = ".runara-output";

// Whether a path relative to the output folder starts with a name runara writes itself
// (run.log, results.json, the marker): a script must not create it, not even as a folder,
// or runara could no longer write its log or results there.
bool starts_with_reserved_name(const std::string& relative);

// True when canonical `path` lies inside a folder holding kOutputMarker (this run's output
// folder or an earlier one's). Any thread.
bool inside_output_folder(const std::string& path);

// Writes `data` to `relative` below the folder `dir_fd` through a temporary file and rename,
// creating sub-folders; no component may be a symlink. "" or an error message. Any thread.
std::string write_beneath(int dir_fd, const std::string& relative, const std::string& data);

// Opens `relative` below the folder `dir_fd`, one component at a time with O_NOFOLLOW,
// creating missing sub-folders; no component may be a symlink. `flags` are openat flags for
// the last part (O_NOFOLLOW is added); with O_DIRECTORY the last part is a folder, made when
// missing. The new descriptor, or -1 with `error` set. Any thread.
int open_beneath(int dir_fd, const std::string& relative, int flags, std::string& error);

}  // namespace runara
