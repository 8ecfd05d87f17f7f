-- Attempt: run the loop under watchdog.deadline(1e9, fn) hoping the script's own (catchable,
-- far away) deadline replaces the run's hard one.
-- Why it must fail: deadlines are per call and catchable; the run deadline is separate.
-- expect: watchdog
-- flags: --max-runtime 1
watchdog.deadline(1e9, function() while true do end end)
print("ESCAPED: the deadline call returned")
