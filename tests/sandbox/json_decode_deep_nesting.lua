-- Attempt: crash the runtime with runara.json.decode of a text nested 1,000,000 levels deep
-- (arrays, then objects), in pcall, then once more outside it: a recursive walk of the parsed
-- document (or of the Lua tables made of it) would overflow the C stack.
-- Why it must fail: decode refuses, before anything is built, a text nested deeper than the
-- runtime's JSON limit (64 levels, base/json_limits.hpp) with a plain script error.
-- expect: error runara.json.decode: the text is nested deeper than 64 levels (at byte 64)
local ok = pcall(runara.json.decode, string.rep('{"a":', 1000000) .. "1" .. string.rep("}", 1000000))
if ok then print("ESCAPED: a 1,000,000-level object was decoded") end
runara.json.decode(string.rep("[", 1000000) .. string.rep("]", 1000000))
print("ESCAPED: a 1,000,000-level array was decoded")
