-- Attempt: spawn tasks without end (each is a coroutine plus runtime bookkeeping), never
-- yielding so none of them runs.
-- Why it must fail: every task's coroutine lives in the capped Lua heap.
-- expect: memory
-- flags: --max-memory 16M
local tasks = {}
while true do
  tasks[#tasks + 1] = runara.spawn(function() end)
end
