-- Attempt: loop inside a string.gsub replacement function (called from C, deep inside the
-- pattern matcher).
-- Why it must fail: the callback is Lua code and is counted; the hook's error unwinds through
-- the matcher.
-- expect: watchdog
-- flags: --max-runtime 1
local s = ("x"):gsub("x", function() while true do end end)
print("ESCAPED: gsub returned " .. s)
