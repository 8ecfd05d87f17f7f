// Shared libraries opened on first use, for the forwarders in runtime/*/*_lazy.cpp. Linking a
// library costs every start of runara its loading and relocation, though most runs never call
// it (`runara -e ''`, a script without machines); a forwarder file defines the library functions
// runara calls, and each opens the library on its first call and forwards to the real function.
//
// Contract: any thread (the callers' function-local statics resolve once, thread-safely). Throws
// std::runtime_error naming the library and the Debian package when it or a symbol is missing.
#pragma once

namespace runara {

// dlopen(soname, RTLD_NOW | RTLD_LOCAL); a library already loaded (a program that links it, as
// the tests do) is returned as is.
void* open_library(const char* soname, const char* debian_package);
void* library_symbol(void* library, const char* soname, const char* name);

}  // namespace runara

// Inside a forwarder named `name`: `fn`, the real function, looked up once from the library that
// `open` (a function returning the dlopen handle) opens.
#define RUNARA_LAZY_REAL(open, soname, name) \
  static auto* const fn = reinterpret_cast<decltype(&name)>(runara::library_symbol(open(), soname, #name))
