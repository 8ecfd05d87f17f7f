#include "exec_image.hpp"

#include <stdexcept>

extern char** environ;

namespace runara::test {

ExecImage::ExecImage(std::vector<std::string> argv, const std::map<std::string, std::optional<std::string>>& env)
    : argv_(std::move(argv)) {
  if (argv_.empty()) throw std::invalid_argument("ExecImage: empty argv");
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (!env.count(entry.substr(0, entry.find('=')))) env_.push_back(entry);
  }
  for (const auto& [name, value] : env) {
    if (value) env_.push_back(name + "=" + *value);
  }
  for (auto& a : argv_) argv_ptrs_.push_back(a.data());
  argv_ptrs_.push_back(nullptr);
  for (auto& e : env_) env_ptrs_.push_back(e.data());
  env_ptrs_.push_back(nullptr);
}

}  // namespace runara::test
