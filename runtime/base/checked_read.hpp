// Reading a whole file a script named (runara.read_file, http_load's prompts.file) without
// trusting its size: the size comes from fstat on the open descriptor and is offered to the
// caller's memory budget before a byte is read, and the read stops at that size, so a file that
// grows meanwhile (or a FIFO, a device, /proc) never makes the process hold more than allowed.
//
// Threading: safe from any thread (no shared state); blocking — call it off the Lua thread
// (libuv's thread pool). Nothing here touches Lua.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace runara {

// Decides about a file of `size` bytes before it is read: "" to read it, else why not.
using SizeCheck = std::function<std::string(std::size_t size)>;

// Reads `path` into `out`; returns "" or an error naming the path ("'p' is not a regular file",
// "cannot read 'p': ...", or the check's own refusal).
std::string read_file_checked(const std::string& path, const SizeCheck& check, std::string& out);

}  // namespace runara
