-- Attempt: getfenv(0) / getfenv(level) to reach the environment of the sandbox's own Lua code
-- (the prelude wrapping load/xpcall, the async shim) and the real globals behind it.
-- Why it must fail: getfenv is removed.
-- expect: error attempt to call global 'getfenv'
local env = getfenv(0)
print("ESCAPED: getfenv is reachable: " .. tostring(env))
