-- Attempt: load a text chunk with a custom environment and use it to reach the real global
-- table or the sandbox's hidden originals (the load wrapper's upvalues real_load/real_setfenv)
-- through the environment argument (e.g. passing a non-table to confuse setfenv).
-- Why it must fail: the environment must be a table; a chunk only sees what it is given.
-- expect: safe
local ok = pcall(load, "return 1", "=x", "t", "not a table")
if ok then print("ESCAPED: load accepted a non-table environment") end
local fn = assert(load("return getfenv, setfenv, debug, io, _G", "=x", "t", {}))
local a, b, c, d, e = fn()
if a or b or c or d or e then print("ESCAPED: a loaded chunk reached hidden globals") end
local fn2 = assert(load("x_from_chunk = 1 return _G", "=x", "t", nil))
local g = fn2()
if g ~= _G then print("ESCAPED: a chunk loaded without env saw a different global table") end
print("SAFE")
