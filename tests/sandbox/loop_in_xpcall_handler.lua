-- Attempt: loop inside xpcall's message handler. In stock Lua the handler runs inside the error
-- machinery, where an error raised by the hook is itself handled by ... the handler again.
-- Why it must fail: the sandbox's xpcall calls the handler after the error has unwound, as
-- ordinary script code, so the hook stops it like any other loop.
-- expect: watchdog
-- flags: --max-runtime 1
xpcall(function() error("boom") end, function(message)
  while true do end
  return message
end)
print("ESCAPED: xpcall's handler returned")
