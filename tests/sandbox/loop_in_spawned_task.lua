-- Attempt: loop forever in a spawned task while the main chunk waits for it.
-- Why it must fail: the hook runs in every task; the run deadline is not per task.
-- expect: watchdog
-- flags: --max-runtime 1
local task = runara.spawn(function() while true do end end)
task:join()
print("ESCAPED: joined a task that never ends")
