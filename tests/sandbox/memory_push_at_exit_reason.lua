-- Attempt: make the runtime allocate at the end of the run, where nothing catches it. A task
-- fails with a 4 MiB error message nobody joins, a runara.at_exit function is registered, and
-- the main chunk ends with the heap 2 MiB below the cap: the run's ending ("task 2 failed and
-- was never joined: " + the message) is pushed as the at_exit function's `reason`. Before that
-- push was made inside the at_exit function's protected call, LuaJIT's panic handler ended the
-- process there: exit 1 with no message, no results.json, no teardown.
-- Why it must fail: the run still ends the way it ended (the unjoined task's error), with its
-- record written; the at_exit function alone fails, for want of memory.
-- expect: error failed and was never joined
-- flags: --max-memory 64M
runara.at_exit(function(ending) print("ESCAPED: at_exit got a reason of " .. #ending.reason .. " bytes") end)
local big = 4 * 1024 * 1024
runara.spawn(function()
  error(string.rep("e", big), 0)
end)
runara.sleep(0)  -- the task fails; its message is garbage once the coroutine is gone
collectgarbage()
KEEP = {}  -- a global: still there once the main chunk has ended
for i = 1, 2000 do KEEP[i] = false end
local i = 0
while collectgarbage("count") < 62 * 1024 do
  i = i + 1
  KEEP[i] = string.rep(tostring(i), 8192)
end
