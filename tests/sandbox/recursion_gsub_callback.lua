-- Attempt: recurse through string.gsub callbacks: each level enters the C pattern matcher
-- (with its buffers on the C stack) and calls back into Lua, which calls gsub again. The C
-- stack overflows (SIGSEGV) long before the Lua stack limit is reached.
-- Why it must fail: re-entering the matcher must be bounded with a catchable error; the
-- pcall below then catches it and the run ends normally.
-- expect: safe
local function f(s) return (s:gsub(".", f)) end
local ok = pcall(f, "ab")
if ok then print("ESCAPED: unbounded gsub recursion returned") end
print("SAFE")
