#include "base/lazy_library.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace runara {

void* open_library(const char* soname, const char* debian_package) {
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    throw std::runtime_error(std::string("cannot load ") + soname + ": " + dlerror() + "; install Debian's " +
                             debian_package + " package (./setup does)");
  }
  return handle;
}

void* library_symbol(void* library, const char* soname, const char* name) {
  void* symbol = dlsym(library, name);
  if (!symbol) throw std::runtime_error(std::string(soname) + " has no " + name + " (too old a version?)");
  return symbol;
}

}  // namespace runara
