-- hello.lua: a short scenario that shows the runtime's building blocks.
-- Run it with: build/runara examples/hello.lua [machines=3]
--
-- Three pretend "machines" warm up in parallel tasks, each within its own deadline; the
-- whole run is capped by the watchdog; the results land in results/<time>-hello/.

local machines = tonumber(runara.params.machines or "3")
watchdog.limit(60)  -- this scenario never needs more than a minute (scripts can only tighten)

runara.log(("hello from runara %s (run %s): warming up %d machines"):format(
  runara.version, runara.run_id, machines))

local function warm_up(n)
  local started = runara.now()
  runara.sleep(0.1 * n)  -- waits yield to the event loop: the other tasks keep running
  return { machine = n, seconds = runara.now() - started }
end

local tasks = {}
for n = 1, machines do
  tasks[n] = runara.spawn(function() return watchdog.deadline(5, warm_up, n) end)
end

local warmups = {}
for n, task in ipairs(tasks) do
  warmups[n] = task:join()
  runara.log(("machine %d warmed up in %.2f s"):format(n, warmups[n].seconds))
end

-- A deadline is the script's own timeout: it raises a catchable error.
local ok, err = pcall(watchdog.deadline, 0.2, runara.sleep, 10)
runara.log("a step that overran its deadline:", ok and "finished" or err)

local total = runara.now()
runara.result("warmups", warmups)
runara.result("wall_seconds", total)
print(("%d machines warmed up in %.2f s wall time (in parallel)"):format(machines, total))
