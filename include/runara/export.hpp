// What librunara exports: the library is compiled with hidden visibility, so only declarations
// marked RUNARA_API (the classes and functions of include/runara/) are visible to a host.
#pragma once

#define RUNARA_API __attribute__((visibility("default")))
