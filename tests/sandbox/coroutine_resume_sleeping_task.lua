-- Attempt: grab a spawned task's coroutine while it waits in runara.sleep and resume it
-- directly: the task would continue while the scheduler still holds its wait (and later
-- resumes it a second time), corrupting the scheduler's state.
-- Why it must fail: the sandbox's coroutine.resume refuses task coroutines.
-- expect: error is a runara task
local co
local task = runara.spawn(function()
  co = coroutine.running()
  runara.sleep(5)
  print("ESCAPED: the sleeping task was resumed early")
end)
runara.sleep(0.05)
coroutine.resume(co)
task:cancel()
print("ESCAPED: coroutine.resume accepted a task's coroutine")
