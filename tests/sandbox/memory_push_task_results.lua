-- Attempt: make the runtime allocate for a finished task where nothing catches it. A task holds
-- 7000 values on its stack while it sleeps; meanwhile the main chunk fills the heap to within
-- about 24 KiB of the cap; then the task returns them all. Collecting a finished task's results
-- builds a table of them (56 KiB) after its coroutine has ended, outside any protected call.
-- Before that was done as an unprotected section (lua_heap.hpp), LuaJIT's panic handler ended
-- the process right there: exit 1 with no message, no results.json, no teardown.
-- Why it must fail: every allocation counts against the cap, and hitting it while the runtime
-- keeps a task's results must end the run the way hitting it in plain Lua code does.
-- expect: memory
-- flags: --max-memory 64M
local n = 7000
local values = {}
for i = 1, n do values[i] = i end
local function pass(...) return select("#", ...) end
local function hold(...)
  pass(...)  -- the stack grows to hold the values twice now: returning them needs no more
  runara.sleep(0.2)
  return ...
end
local t = runara.spawn(function() return hold(unpack(values, 1, n)) end)
runara.sleep(0)  -- the task has its values on its stack, and sleeps

local limit_kib = 64 * 1024
local keep = {}
for i = 1, 8000 do keep[i] = false end  -- no table growth while filling
local i = 0
local function fill_to(kib, piece)
  while collectgarbage("count") < kib do
    i = i + 1
    keep[i] = string.rep(tostring(i), piece)
  end
end
fill_to(limit_kib - 256, 8192 / 4)  -- about 8 KiB a piece
collectgarbage()                      -- what is left is what is kept: the count is exact
fill_to(limit_kib - 24, 512 / 4)      -- about 512 bytes a piece
t:join()
print("ESCAPED: a task returned 7000 values with the heap " ..
      math.floor(limit_kib - collectgarbage("count")) .. " KiB below the cap")
