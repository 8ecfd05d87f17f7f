// The paths tests start programs from and read files in: the source tree, the build folder, the
// runara program. They come from one file, test_paths.cpp, the only one compiled with them; as
// compile definitions of every test file they made each object differ between two clones of the
// repository, and a compiler cache reused none of them in CI's fresh clone
// (runtime/base/build_paths.hpp says the same of the runtime's own paths).
//
// Contract: header of test code; the macros keep the names tests have always used, and are
// expressions (const char*), not string literals.
#pragma once

namespace runara::test {

const char* source_dir();     // the repository
const char* binary_dir();     // the build folder
const char* runara_binary();  // build/runara

}  // namespace runara::test

#define RUNARA_SOURCE_DIR (::runara::test::source_dir())
#define RUNARA_BINARY_DIR (::runara::test::binary_dir())
#define RUNARA_BINARY (::runara::test::runara_binary())
