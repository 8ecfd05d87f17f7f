-- Attempt: run the infinite loop inside a coroutine made by the script, hoping the hook was
-- installed on the main coroutine only.
-- Why it must fail: LuaJIT's hooks are per VM, every coroutine is counted.
-- expect: watchdog
-- flags: --max-runtime 1
local co = coroutine.create(function() while true do end end)
coroutine.resume(co)
print("ESCAPED: the coroutine's loop ended")
