-- Attempt: unbounded recursion through __index metamethods (t[k] inside __index of t), which
-- the VM handles with continuation frames rather than Lua calls.
-- Why it must fail: these frames are on the Lua stack too: "stack overflow".
-- expect: error stack overflow
local t
t = setmetatable({}, { __index = function(self, k) return self[k .. "x"] end })
local _ = t.a
print("ESCAPED: recursive __index returned")
