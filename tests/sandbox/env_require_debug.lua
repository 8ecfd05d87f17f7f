-- Attempt: get the debug library back through require "debug" (then debug.getregistry,
-- debug.sethook, debug.getupvalue on the sandbox's wrappers...).
-- Why it must fail: require only finds .lua files; no built-in library is preloaded for it.
-- expect: error module 'debug' not found
local debug = require("debug")
print("ESCAPED: require returned the debug library: " .. tostring(debug))
