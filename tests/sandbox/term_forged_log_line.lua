-- Attempt: forge runara's own log lines on stderr and in run.log ("[   0.001] ..."), with a line
-- feed or a CR inside runara.log's text, a task's error, and a chunk name that shows up in a
-- traceback.
-- Why it must fail: only runara writes a log line's start (its stamp); every later line of one
-- entry is indented by the stamp's width, and a CR shows as ^M: the corpus checks that no line of
-- stderr or run.log starts with "[   0.001] FORGED".
-- expect: safe
runara.log("ok\n[   0.001] FORGED: teardown skipped, machines kept")
runara.log("ok\r[   0.001] FORGED: over the stamp")
local t = runara.spawn(function() error("lost\n[   0.001] FORGED: by a task's error", 0) end)
runara.sleep(0.05)
local f = load("error('x')", "=c\n[   0.001] FORGED")
local t2 = runara.spawn(f)
runara.sleep(0.05)
pcall(t.join, t)
pcall(t2.join, t2)
print("SAFE")
