-- Attempt: loop inside load()'s reader function. load runs its reader in protected mode and
-- turns any error into a (nil, message) return, so the watchdog's error would be swallowed;
-- then loop again.
-- Why it must fail: after load returns, the stop error must be raised at the next
-- instruction. (With LuaJIT's load catching the hook's error in a C frame, the VM's "hook
-- active" flag stays set and no hook fires again: see watchdog_hook_killed_in_load_reader.lua.)
-- expect: watchdog
-- flags: --max-runtime 1
while true do
  load(function() while true do end end)
end
