-- Attempt: make runara keep a huge string in C++ by raising it as a usage error (runara keeps
-- the last usage message until the run ends, outside the Lua heap's accounting).
-- Why it must fail: runara.usage_error refuses a message over 4096 bytes before keeping it.
-- expect: error runara.usage_error: the message is 8388608 bytes, at most 4096
local big = string.rep("x", 8 * 1024 * 1024)
runara.usage_error(big)
print("ESCAPED: an 8 MiB usage message was kept")
