-- Attempt: coroutine.resume the main task's own coroutine (from coroutine.running()), to run
-- it behind the scheduler's back.
-- Why it must fail: the sandbox's coroutine.resume refuses coroutines that are runara tasks.
-- expect: error is a runara task
local me = coroutine.running()
coroutine.resume(me)
print("ESCAPED: resumed the main task's coroutine")
