-- Attempt: look through the globals and the libraries for anything that reaches the host:
-- io, debug, jit, ffi, package, dofile/loadfile, getfenv/setfenv, newproxy, module, gcinfo,
-- string.dump, os.execute/exit/remove/rename/tmpname/setlocale, and references to the
-- registry's original library tables hidden in a library table.
-- Why it must fail: the sandbox opens libraries one by one and removes all of these; what
-- remains is listed in the permission model (base, string, table, math, bit, coroutine,
-- os.time/clock/date/getenv, require, runara, watchdog).
-- expect: safe
local forbidden_globals = {
  "io", "debug", "jit", "ffi", "package", "dofile", "loadfile", "getfenv", "setfenv",
  "newproxy", "module", "gcinfo", "_LOADED", "_PRELOAD",
}
for _, name in ipairs(forbidden_globals) do
  if rawget(_G, name) ~= nil then print("ESCAPED: global " .. name .. " is reachable") end
end
if string.dump ~= nil or ("").dump ~= nil then print("ESCAPED: string.dump is reachable") end
local os_allowed = { time = true, clock = true, date = true, getenv = true }
for name in pairs(os) do
  if not os_allowed[name] then print("ESCAPED: os." .. name .. " is reachable") end
end
-- A library table must not hold another library (e.g. a full os table under a new name).
local seen = {}
local function scan(t, path, depth)
  if seen[t] or depth > 3 then return end
  seen[t] = true
  for k, v in pairs(t) do
    if type(v) == "table" then
      if rawget(v, "execute") or rawget(v, "popen") or rawget(v, "getregistry") or rawget(v, "cdef") then
        print("ESCAPED: a host library is reachable at " .. path .. "." .. tostring(k))
      end
      scan(v, path .. "." .. tostring(k), depth + 1)
    end
  end
end
scan(_G, "_G", 0)
print("SAFE")
