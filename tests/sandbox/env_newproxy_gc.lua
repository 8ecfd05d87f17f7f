-- Attempt: newproxy(true) makes a userdata whose metatable can get a __gc finalizer; finalizers
-- run inside the garbage collector where the count hook is disabled, so an infinite loop there
-- could never be stopped.
-- Why it must fail: newproxy is removed.
-- expect: error attempt to call global 'newproxy'
-- flags: --max-runtime 5
local proxy = newproxy(true)
getmetatable(proxy).__gc = function() while true do end end
proxy = nil
collectgarbage()
print("ESCAPED: newproxy is reachable")
