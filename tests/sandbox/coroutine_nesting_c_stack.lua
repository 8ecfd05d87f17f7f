-- Attempt: nest coroutines without end (each level resumes a new coroutine.wrap from inside
-- the previous one). Every nested resume adds C stack frames but few Lua stack slots, so the
-- process's C stack overflows (SIGSEGV) long before the memory cap or Lua's stack limit.
-- Why it must fail: nesting must be bounded with a catchable error ("C stack overflow" /
-- "nested too deeply"); the pcall below then catches it and the run ends normally.
-- (Run with the default 1 GiB memory cap: a small cap hides the crash behind a memory stop.)
-- expect: safe
local depth = 0
local function nest()
  depth = depth + 1
  return coroutine.wrap(nest)()
end
local ok = pcall(nest)
if ok then print("ESCAPED: unbounded coroutine nesting returned") end
print("SAFE")
