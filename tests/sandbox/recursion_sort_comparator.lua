-- Attempt: recurse through table.sort comparators (C -> Lua -> C ...) to overflow the C stack.
-- Why it must fail: the recursion must end in a catchable error ("stack overflow").
-- expect: safe
local function f()
  table.sort({ 2, 1 }, function(a, b) f() return a < b end)
end
local ok = pcall(f)
if ok then print("ESCAPED: unbounded sort recursion returned") end
print("SAFE")
