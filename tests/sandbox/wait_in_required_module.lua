-- Attempt: a module that waits (runara.sleep) while it is being loaded by require: require
-- runs the module's body from C, a C-call boundary the task cannot yield across. As with a
-- wait in a gsub callback, the wait is registered before the yield fails, and the stale wait
-- later fires into freed state (SIGSEGV). The harness writes sleepy.lua for this attempt.
-- Why it must fail: the wait must be refused cleanly (or be allowed to work); either way the
-- error is catchable and the run must end normally.
-- expect: safe
pcall(require, "sleepy")
local started = runara.now()
runara.sleep(0.4)
local slept = runara.now() - started
if slept < 0.35 then
  print(("ESCAPED: a stale wait woke the task early (slept %.3f s of 0.4 s)"):format(slept))
end
print("SAFE")
