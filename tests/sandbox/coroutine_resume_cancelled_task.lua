-- Attempt: cancel a task, then resume its coroutine (kept from coroutine.running()). The task
-- was suspended inside runara.sleep; resuming it makes its body continue after cancellation,
-- outside the scheduler, which believes it is gone.
-- Why it must fail: a task's coroutine must never be resumable by scripts, before or after
-- the task has ended.
-- expect: safe
local co
local task = runara.spawn(function()
  co = coroutine.running()
  runara.sleep(10)
  print("ESCAPED: a cancelled task's body ran again (its coroutine was resumed by the script)")
end)
runara.sleep(0.05)
task:cancel()
pcall(coroutine.resume, co)
print("SAFE")
