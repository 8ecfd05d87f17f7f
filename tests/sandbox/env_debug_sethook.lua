-- Attempt: remove the watchdog's count hook with debug.sethook() and then loop forever; the
-- run would never end.
-- Why it must fail: there is no debug library, so the hook cannot be touched.
-- (--max-runtime is a backstop: if the hook could be removed, the run would hang instead.)
-- expect: error attempt to index global 'debug'
-- flags: --max-runtime 5
debug.sethook()
print("ESCAPED: debug.sethook is reachable")
while true do end
