-- Attempt: switch the count hook off for good. When the hook raises its error inside a load()
-- reader function, LuaJIT's load catches it in a C frame that does not clear the VM's "hook
-- active" flag, so no hook fires ever again (until some later error unwinds through a pcall):
-- --max-runtime, SIGINT/SIGTERM and deadlines can no longer stop the script. Here the script
-- does it on purpose, with its own deadline expiring inside the reader, then loops forever.
-- (loop_in_load_reader.lua gets there through the watchdog's own stop error.)
-- Why it must fail: nothing a script does may keep --max-runtime from stopping it; e.g. the
-- sandbox's load can drain a reader function in Lua (under pcall) before parsing.
-- expect: watchdog
-- flags: --max-runtime 1
pcall(watchdog.deadline, 0.05, function()
  load(function() while true do end end)
  while true do end
end)
while true do end
