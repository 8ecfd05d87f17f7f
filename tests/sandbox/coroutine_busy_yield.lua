-- Attempt: starve the event loop with bare coroutine.yield() calls from the main task (each
-- one goes back to the scheduler, which makes the task ready again at once), hoping the
-- watchdog only fires while Lua code runs.
-- Why it must fail: the loop still executes instructions, so the count hook stops it.
-- expect: watchdog
-- flags: --max-runtime 1
while true do coroutine.yield() end
