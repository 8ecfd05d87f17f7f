-- Attempt: reach the original libraries through package.loaded (io, os, debug, ffi are often
-- still in there even when removed from _G) or add a C loader through package.cpath.
-- Why it must fail: the package table is removed; require is the sandbox's own function.
-- expect: error attempt to index global 'package'
local io_lib = package.loaded.io or package.loaded["_G"].io
print("ESCAPED: package.loaded is reachable: " .. tostring(io_lib))
