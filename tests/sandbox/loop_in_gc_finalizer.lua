-- Attempt: a __gc finalizer on a plain table that loops forever; finalizers run inside the
-- garbage collector with the hook disabled, so this loop could never be stopped.
-- Why it must fail: in Lua 5.1 / LuaJIT only userdata have finalizers and scripts cannot make
-- userdata (no newproxy); the table's __gc is never called.
-- expect: safe
-- flags: --max-runtime 5
for _ = 1, 100 do
  setmetatable({}, { __gc = function() while true do end end })
end
collectgarbage()
collectgarbage()
print("SAFE")
