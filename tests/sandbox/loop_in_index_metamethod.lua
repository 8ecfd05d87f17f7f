-- Attempt: loop inside an __index metamethod (called by the VM, not by a Lua call the
-- script makes).
-- Why it must fail: metamethods are Lua code; the count hook fires in them.
-- expect: watchdog
-- flags: --max-runtime 1
local t = setmetatable({}, { __index = function() while true do end end })
local _ = t.anything
print("ESCAPED: __index returned")
