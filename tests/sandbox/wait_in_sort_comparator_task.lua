-- Attempt: the same C-call-boundary wait, in a spawned task's table.sort comparator; the task
-- then ends and its handle is collected (freeing the task) while the stale wait's timer is
-- still pending: when it fires, the scheduler touches the freed task (use after free).
-- Why it must fail: a wait that cannot yield must be refused before anything is registered.
-- expect: safe
local task = runara.spawn(function()
  pcall(table.sort, { 2, 1 }, function(a, b) runara.sleep(0.2) return a < b end)
  runara.sleep(0.01)
end)
task:join()
task = nil
collectgarbage()
collectgarbage()
local started = runara.now()
runara.sleep(0.4)
local slept = runara.now() - started
if slept < 0.35 then
  print(("ESCAPED: a stale wait woke the main task early (slept %.3f s of 0.4 s)"):format(slept))
end
print("SAFE")
