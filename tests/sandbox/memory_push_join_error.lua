-- Attempt: make the event loop allocate on the script's behalf where nothing catches it. A task
-- fails with a 6 MiB error message while the main chunk waits in task:join with the heap 3 MiB
-- below the cap: ending the join means pushing a new 6 MiB string ("file:line: " + message) onto
-- the waiting coroutine, from the loop, outside any protected call. Before runara pushed a wait's
-- values from inside the resumed task, LuaJIT's panic handler ended the process right there:
-- exit 1 with no message, no results.json, no teardown.
-- Why it must fail: every allocation counts against the cap, and hitting it from a primitive's
-- result must end the run the way hitting it in plain Lua code does.
-- expect: memory
-- flags: --max-memory 64M
local big = 6 * 1024 * 1024
local held = {}  -- the message stays alive: a collection cannot make room for the new string
local t = runara.spawn(function()
  held.message = string.rep("e", big)
  runara.sleep(0.2)
  error(held.message, 0)  -- no location: the spawn line is prefixed, so join gets a new string
end)
runara.sleep(0)  -- the task builds its message and sleeps
local keep = {}
for i = 1, 2000 do keep[i] = false end  -- no table growth while filling
local i = 0
while collectgarbage("count") < 61 * 1024 do
  i = i + 1
  keep[i] = string.rep(tostring(i), 8192)
end
t:join()
print("ESCAPED: joined a 6 MiB error 3 MiB below the memory cap")
