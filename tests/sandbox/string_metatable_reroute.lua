-- Attempt: take the shared string metatable (getmetatable("")) and reroute every string method
-- (__index) to script code, or replace it with setmetatable/rawset; in a shared runtime this
-- would hijack string calls made by other code.
-- Why it must fail: the string metatable is locked with __metatable, so getmetatable("")
-- returns a plain string and nothing can be set on the real one.
-- expect: safe
local mt = getmetatable("")
if type(mt) == "table" then
  mt.__index = function() return function() print("ESCAPED: hijacked a string method") end end
  print("ESCAPED: the string metatable is reachable")
end
if pcall(setmetatable, "", {}) then print("ESCAPED: setmetatable changed the string metatable") end
if pcall(rawset, mt, "__index", {}) then print("ESCAPED: rawset on the string metatable") end
local s = "abc"
if s:upper() ~= "ABC" then print("ESCAPED: string methods were rerouted") end
print("SAFE")
