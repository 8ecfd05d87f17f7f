// The run's output folder: run.log, results.json and whatever the script writes with
// runara.write_file. Created on first use, so runs that write nothing leave nothing behind.
#pragma once

#include <cstdio>
#include <string>

namespace runara {

class RunOutput {
 public:
  RunOutput() = default;
  ~RunOutput();
  RunOutput(const RunOutput&) = delete;
  RunOutput& operator=(const RunOutput&) = delete;

  // `requested` empty: results/<UTC yyyymmdd-HHMMSS>-<name>/ under the current folder.
  void configure(const std::string& requested, const std::string& script_name);
  const std::string& dir();            // creates the folder
  bool created() const { return created_; }
  void append_log(const std::string& line);
  // Writes `data` to `relative` (already checked) atomically; returns "" or an error message.
  std::string write(const std::string& relative, const std::string& data);
  void close();

 private:
  std::string dir_;
  bool created_ = false;
  std::FILE* log_ = nullptr;
};

// Writes through a temporary file and rename, creating parent folders; "" or an error message.
// Safe to call from any thread.
std::string write_file_atomic(const std::string& path, const std::string& data);

// The whole file as bytes; false (errno set) when it cannot be opened. Safe from any thread.
bool read_file_text(const std::string& path, std::string& out);

// mkdir -p; returns "" or an error message.
std::string make_dirs(const std::string& path, unsigned mode = 0755);

}  // namespace runara
