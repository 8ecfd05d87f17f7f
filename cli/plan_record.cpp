#include "plan_record.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace runara::cli {

namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  std::string line;
  std::size_t read = 0;
  while (read < kMaxRecordBytes && std::getline(in, line)) {
    read += line.size() + 1;
    lines.push_back(std::move(line));
  }
  return lines;
}

// "[   0.071] text" -> "text"
std::string after_stamp(const std::string& line) {
  if (line.empty() || line[0] != '[') return line;
  const auto close = line.find("] ");
  return close == std::string::npos ? line : line.substr(close + 2);
}

void count(PlanRecord& r, std::map<std::string, int>& into, const std::string& key) {
  const auto it = into.find(key);
  if (it != into.end()) {
    ++it->second;
  } else if (into.size() < kMaxEntries) {
    into[key.substr(0, 400)] = 1;
  } else {
    ++r.left_out;
  }
}

bool starts(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

// "creating droplet NAME (SIZE in REGION, image IMAGE, $P/h)" (runtime/cloud/droplet_fleet.cpp).
// The name comes first and has no spaces (droplet names cannot); the rest is parsed from the end.
bool parse_created(const std::string& text, PlannedMachine& m) {
  const std::string lead = "creating droplet ";
  if (!starts(text, lead.c_str())) return false;
  const auto open = text.find(" (", lead.size());
  const auto dollar = text.rfind(", $");
  const auto image = text.rfind(", image ");
  const auto in = text.find(" in ", open);
  if (open == std::string::npos || dollar == std::string::npos || image == std::string::npos || in == std::string::npos ||
      !(in < image && image < dollar))
    return false;
  m.name = text.substr(lead.size(), open - lead.size());
  m.size = text.substr(open + 2, in - open - 2);
  m.region = text.substr(in + 4, image - in - 4);
  m.image = text.substr(image + 8, dollar - image - 8);
  m.price_hourly = std::strtod(text.c_str() + dollar + 3, nullptr);
  return true;
}

void read_run_log(const std::string& path, PlanRecord& r) {
  int alive = 0;
  for (const std::string& line : lines_of(path)) {
    const std::string text = after_stamp(line);
    PlannedMachine m;
    if (parse_created(text, m)) {
      if (r.machines.size() < kMaxEntries) r.machines.push_back(m);
      else ++r.left_out;
      r.peak_machines = std::max(r.peak_machines, ++alive);
    } else if (starts(text, "droplet ") && text.size() > 8 && text.find(") is gone") == text.size() - 9) {
      alive = std::max(0, alive - 1);
    } else if (starts(text, "watchdog: the run is limited to ")) {
      const double s = std::strtod(text.c_str() + 32, nullptr);
      if (s > 0 && (r.script_limit_s == 0 || s < r.script_limit_s)) r.script_limit_s = s;
    } else if (starts(text, "http_load ") && text.find(": starting, ") != std::string::npos) {
      // "... 1 thread(s), URL" then, for an agent's load, a progress line names the machine.
      const auto comma = text.rfind(", ");
      count(r, r.loads, text.substr(comma + 2));
    }
  }
}

// The rehearsal's output folder is a temporary one: shown as OUT/ (where a run's would be).
std::string outside_paths(std::string text, const std::string& out_dir) {
  for (std::size_t at = 0; (at = text.find(out_dir + "/", at)) != std::string::npos;) text.replace(at, out_dir.size(), "OUT");
  return text;
}

void read_ssh_log(const std::string& path, const std::string& machine, const std::string& out_dir, PlanRecord& r) {
  for (const std::string& line : lines_of(path)) {
    if (starts(line, "$ ")) {
      count(r, r.commands, line.substr(2));
    } else if (starts(line, "# s:upload ") || starts(line, "# s:download ")) {
      const auto colon = line.rfind(": ");
      const std::string what = line.substr(2, colon == std::string::npos ? std::string::npos : colon - 2);
      count(r, r.files, outside_paths(what, out_dir) + " (" + machine + ")");
    }
  }
}

}  // namespace

PlanRecord read_plan_record(const std::string& out_dir) {
  PlanRecord r;
  read_run_log(out_dir + "/run.log", r);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(out_dir + "/ssh", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.substr(name.size() - 4) == ".log")
      read_ssh_log(entry.path().string(), name.substr(0, name.size() - 4), out_dir, r);
  }
  for (const std::string& grant : lines_of(out_dir + "/plan-denied.txt"))
    if (r.denied.size() < 100 && std::find(r.denied.begin(), r.denied.end(), grant) == r.denied.end())
      r.denied.push_back(grant);
  const auto outcome = lines_of(out_dir + "/plan-outcome.txt");
  if (!outcome.empty()) {
    r.outcome_known = true;
    r.exit_code = std::atoi(outcome[0].c_str());
    for (std::size_t i = 1; i < outcome.size(); ++i) r.message += (i > 1 ? "\n" : "") + outcome[i];
  }
  return r;
}

void write_plan_outcome(const std::string& out_dir, int exit_code, const std::string& message) {
  // The run may have left no folder: a cloud that did not start, a usage error with nothing written.
  std::error_code ignored;
  std::filesystem::create_directories(out_dir, ignored);
  std::ofstream out(out_dir + "/plan-outcome.txt", std::ios::trunc);
  out << exit_code << "\n" << message << "\n";
}

void append_plan_denied(const std::string& out_dir, const std::string& grant) {
  std::error_code ignored;
  std::filesystem::create_directories(out_dir, ignored);
  std::ofstream out(out_dir + "/plan-denied.txt", std::ios::app);
  std::string line = grant.substr(0, 300);
  std::replace(line.begin(), line.end(), '\n', ' ');
  out << line << "\n";
}

}  // namespace runara::cli
