-- Attempt: loop inside a __tostring metamethod that the runtime itself calls (print and
-- runara.log call tostring on their arguments from C++).
-- Why it must fail: the metamethod is Lua code and is counted even when C++ calls it.
-- expect: watchdog
-- flags: --max-runtime 1
local t = setmetatable({}, { __tostring = function() while true do end end })
runara.log(t)
print("ESCAPED: runara.log returned")
