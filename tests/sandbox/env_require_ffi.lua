-- Attempt: require "ffi" and call libc's system() through ffi.C (LuaJIT's FFI is a full
-- native-code escape).
-- Why it must fail: the sandbox never calls luaL_openlibs (which preloads ffi), and require
-- only loads pure-Lua files from the script's folder and the stdlib.
-- expect: error module 'ffi' not found
local ffi = require("ffi")
ffi.cdef("int system(const char *command);")
ffi.C.system("touch ../escape-marker-ffi")
print("ESCAPED: ffi is reachable")
