// Compiled with the paths of this build (tests/CMakeLists.txt sets them on this file alone).
#include "test_paths.hpp"

namespace runara::test {

const char* source_dir() { return RUNARA_TEST_SOURCE_DIR; }
const char* binary_dir() { return RUNARA_TEST_BINARY_DIR; }
const char* runara_binary() { return RUNARA_TEST_RUNARA_BINARY; }

}  // namespace runara::test
