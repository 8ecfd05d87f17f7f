-- Attempt: setfenv on the sandbox's load wrapper so that its upvalue lookups (real_load,
-- real_setfenv) resolve in a table the script controls.
-- Why it must fail: setfenv is removed (the wrapper keeps the original only as a private upvalue).
-- expect: error attempt to call global 'setfenv'
setfenv(load, { type = function() return "string" end })
print("ESCAPED: setfenv is reachable")
