// Reads a recorded GPU tool output from tests/fixtures/gpu/ (see tests/fixtures/SOURCES.md).
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include "test_paths.hpp"

inline std::string read_gpu_fixture(const std::string& name) {
  std::ifstream f(std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/gpu/" + name, std::ios::binary);
  if (!f) throw std::runtime_error("missing fixture " + name);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
