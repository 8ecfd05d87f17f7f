-- Attempt: unbounded Lua recursion to overflow the stack (and the C stack behind it).
-- Why it must fail: LuaJIT bounds the Lua stack and raises "stack overflow", a normal error.
-- expect: error stack overflow
local function f() return 1 + f() end
f()
print("ESCAPED: unbounded recursion returned")
