-- Attempt: yield from a script coroutine into the scheduler: call runara.sleep inside
-- coroutine.wrap, so the wait is registered for a coroutine the scheduler does not own (the
-- wake-up would then resume the script's coroutine, or the wrong one).
-- Why it must fail: waits are only allowed in tasks; anywhere else they raise an error.
-- expect: error cannot wait inside a coroutine
local wrapped = coroutine.wrap(function()
  runara.sleep(0.01)
  return "woke up"
end)
local got = wrapped()
print("ESCAPED: a plain coroutine waited through the scheduler: " .. tostring(got))
