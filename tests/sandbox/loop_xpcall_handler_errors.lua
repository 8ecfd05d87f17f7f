-- Attempt: an xpcall handler that always raises, recursing into itself; then catching the
-- watchdog error with xpcall whose handler restarts the loop.
-- Why it must fail: handler errors simply propagate; the stop error is raised at every
-- instruction, including the handler's.
-- expect: watchdog
-- flags: --max-runtime 1
local function spin()
  while true do end
end
local function handler(message)
  return select(2, xpcall(spin, handler))
end
while true do
  xpcall(spin, handler)
end
